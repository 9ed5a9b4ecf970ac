import CMicroHTTPD

/// Per-request state that libmicrohttpd carries in `*req_cls` between access-handler calls.
///
/// - Important: libmicrohttpd processes one connection on one thread at a time, so the request
///   fields are touched without a lock by that thread. ``phase`` is the exception: the handler
///   task writes it, so it is read and written only under ``MHDServerCore``'s lock. One retain is
///   owned by libmicrohttpd (taken in the first access-handler call, released in the
///   request-completed callback); the handler task holds its own.
final class MHDRequestContext: @unchecked Sendable {
    /// Where the request is in its life.
    enum Phase {
        /// Headers and body are arriving.
        case receiving
        /// The connection is suspended while the Swift handler runs.
        case awaitingHandler
        /// The handler finished and the connection was resumed to send this.
        case ready(HTTPServerResponse)
        /// The server is stopping; the connection was resumed only to be closed.
        case abandoned
        /// A response has been queued (or the connection refused).
        case finished
    }

    /// The libmicrohttpd connection (`struct MHD_Connection *`), valid until the request completes.
    let connection: OpaquePointer
    /// The request as parsed so far; the body grows as upload chunks arrive.
    var request: HTTPServerRequest
    /// Set once the body exceeded the limit; further bytes are discarded and 413 is sent.
    var bodyTooLarge = false
    /// Guarded by ``MHDServerCore``'s lock.
    var phase: Phase = .receiving

    /// Creates the context on the first access-handler call.
    init(connection: OpaquePointer, request: HTTPServerRequest) {
        self.connection = connection
        self.request = request
    }

    /// Appends an upload chunk unless that would pass `limit`, in which case the body is dropped
    /// and the request marked too large (the rest of the upload is read and discarded).
    /// - Parameters:
    ///   - bytes: The chunk libmicrohttpd passed in `upload_data`.
    ///   - limit: The configured maximum body size.
    func appendBody(_ bytes: UnsafeRawBufferPointer, limit: Int) {
        guard !bodyTooLarge else { return }
        if request.body.count + bytes.count > limit {
            bodyTooLarge = true
            request.body = []
        } else {
            request.body.append(contentsOf: bytes)
        }
    }
}
