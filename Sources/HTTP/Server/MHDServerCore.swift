import CMicroHTTPD
import Synchronization

/// The state shared by libmicrohttpd's callbacks, the handler tasks and ``HTTPServer/stop()``.
///
/// Bridging choice: **suspend/resume**. When a request is complete the access handler calls
/// `MHD_suspend_connection`, starts a Swift `Task` running the async handler, and returns at once,
/// so the libmicrohttpd worker thread goes back to serving other sockets. When the handler
/// returns, the task stores the response and calls `MHD_resume_connection`; libmicrohttpd then
/// calls the access handler again on its own thread, which queues the response. Blocking the worker
/// on a semaphore instead would cap throughput at `threadPoolSize / handlerLatency` (8 req/s for
/// 2 threads and a 250 ms latency knob); with suspend/resume, handler latency costs no thread.
///
/// - Important: libmicrohttpd aborts if it is stopped while connections are suspended. Every
///   suspend and resume happens under ``state``'s lock together with the `stopping` check, so
///   ``beginStop()`` can resume every suspended connection before `MHD_stop_daemon` runs, and a late
///   handler task can never touch a connection that is being torn down.
final class MHDServerCore: Sendable {
    private struct State {
        var stopping = false
        /// Connections suspended while their handler runs, keyed by context identity.
        var suspended: [ObjectIdentifier: MHDRequestContext] = [:]
    }

    let handler: @Sendable (HTTPServerRequest) async -> HTTPServerResponse
    let maxBodySize: Int
    private let state = Mutex(State())
    let connectionsAccepted = Atomic<Int>(0)
    let requestsHandled = Atomic<Int>(0)
    let requestsTooLarge = Atomic<Int>(0)

    init(maxBodySize: Int, handler: @escaping @Sendable (HTTPServerRequest) async -> HTTPServerResponse) {
        self.maxBodySize = maxBodySize
        self.handler = handler
    }

    // MARK: Access handler (libmicrohttpd worker thread)

    /// The body of `MHD_AccessHandlerCallback`; see the type documentation for the flow.
    func access(
        connection: OpaquePointer, url: String, method: String, version: String,
        upload: UnsafeRawBufferPointer?, uploadSize: UnsafeMutablePointer<Int>,
        requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = requestSlot.pointee else {
            // First call: headers are complete, no body seen yet.
            let context = makeContext(connection: connection, url: url, method: method, version: version)
            requestSlot.pointee = Unmanaged.passRetained(context).toOpaque()
            return .YES
        }
        let context = Unmanaged<MHDRequestContext>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let upload { context.appendBody(UnsafeRawBufferPointer(rebasing: upload[0..<uploadSize.pointee]), limit: maxBodySize) }
            uploadSize.pointee = 0
            return .YES
        }
        return requestComplete(context)
    }

    private func requestComplete(_ context: MHDRequestContext) -> MHD_Result {
        if context.bodyTooLarge {
            requestsTooLarge.add(1, ordering: .relaxed)
            state.withLock { _ in context.phase = .finished }
            return queue(.tooLarge(limit: maxBodySize), on: context.connection)
        }
        enum Next { case suspended, respond(HTTPServerResponse), close, ignore }
        let next: Next = state.withLock { state in
            switch context.phase {
            case .receiving:
                if state.stopping {
                    context.phase = .finished
                    return .respond(.serviceUnavailable)
                }
                context.phase = .awaitingHandler
                MHD_suspend_connection(context.connection)
                state.suspended[ObjectIdentifier(context)] = context
                return .suspended
            case .ready(let response):
                context.phase = .finished
                return response.dropsConnection ? .close : .respond(response)
            case .abandoned:
                context.phase = .finished
                return .close
            case .awaitingHandler, .finished:
                return .ignore
            }
        }
        switch next {
        case .suspended:
            let request = context.request
            context.request.body = []  // the task owns the body now; do not keep two copies
            // On the server's own executor, so a busy cooperative pool cannot starve answers.
            Task(executorPreference: HandlerExecutor.shared) { [self] in
                let response = await handler(request)
                requestsHandled.add(1, ordering: .relaxed)
                deliver(response, to: context)
            }
            return .YES
        case .respond(let response):
            return queue(response, on: context.connection)
        case .close:
            // .NO makes libmicrohttpd close the socket without writing anything.
            return .NO
        case .ignore:
            return .YES
        }
    }

    /// Stores the handler's response and resumes the connection, unless the server already
    /// abandoned it while stopping.
    private func deliver(_ response: HTTPServerResponse, to context: MHDRequestContext) {
        state.withLock { state in
            guard state.suspended.removeValue(forKey: ObjectIdentifier(context)) != nil else { return }
            context.phase = .ready(response)
            MHD_resume_connection(context.connection)
        }
    }

    private func makeContext(connection: OpaquePointer, url: String, method: String, version: String) -> MHDRequestContext {
        let request = HTTPServerRequest(
            method: HTTPMethod(rawValue: method),
            path: url,
            queryItems: MHDValues.collect(connection, kind: .GET_ARGUMENT_KIND),
            headers: HTTPHeaders(MHDValues.collect(connection, kind: .HEADER_KIND).map { ($0.name, $0.value) }),
            body: [],
            httpVersion: HTTPVersion(token: version) ?? .http1_1)
        let context = MHDRequestContext(connection: connection, request: request)
        if let declared = request.headers["Content-Length"].flatMap({ Int($0) }) {
            if declared > maxBodySize {
                context.bodyTooLarge = true  // still drain the upload, then answer 413
            } else if declared > 0 {
                context.request.body.reserveCapacity(declared)
            }
        }
        return context
    }

    /// Turns a response into a libmicrohttpd response and queues it on the connection.
    private func queue(_ response: HTTPServerResponse, on connection: OpaquePointer) -> MHD_Result {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse = created else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers where !HTTPHeaders.equalNames(field.name, "Content-Length") {
            _ = MHD_add_response_header(mhdResponse, field.name, field.value)
        }
        return MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
    }

    // MARK: Lifecycle

    /// Called from the request-completed callback: drops libmicrohttpd's retain of the context.
    func requestCompleted(_ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let requestSlot, let raw = requestSlot.pointee else { return }
        requestSlot.pointee = nil
        Unmanaged<MHDRequestContext>.fromOpaque(raw).release()
    }

    /// Refuses new handler work and resumes every suspended connection (to be closed), which
    /// libmicrohttpd requires before `MHD_stop_daemon`.
    func beginStop() {
        state.withLock { state in
            state.stopping = true
            for context in state.suspended.values {
                context.phase = .abandoned
                MHD_resume_connection(context.connection)
            }
            state.suspended.removeAll()
        }
    }
}

extension HTTPServerResponse {
    /// The reply for bodies over the limit; `Connection: close` because the client misbehaved.
    static func tooLarge(limit: Int) -> HTTPServerResponse {
        var response = HTTPServerResponse.text("request body exceeds \(limit) bytes\n", status: 413)
        response.headers["Connection"] = "close"
        return response
    }

    /// The reply for requests that complete while the server is stopping.
    static var serviceUnavailable: HTTPServerResponse {
        var response = HTTPServerResponse.text("server is stopping\n", status: 503)
        response.headers["Connection"] = "close"
        return response
    }
}
