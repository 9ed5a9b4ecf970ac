import CMicroHTTPD
import Synchronization

/// The C entry points handed to libmicrohttpd. Each is a capture-free closure (as C function
/// pointers must be) that recovers ``MHDServerCore`` from the `cls` pointer and forwards to it.
/// The core outlives every callback because ``HTTPServer`` owns it and stops the daemon (which
/// joins libmicrohttpd's threads) before releasing it.
enum MHDCallbacks {
    /// `MHD_AccessHandlerCallback`: called several times per request (headers, body chunks, end).
    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadSize, requestSlot in
        guard let cls, let connection, let uploadSize, let requestSlot else { return .NO }
        let core = Unmanaged<MHDServerCore>.fromOpaque(cls).takeUnretainedValue()
        let upload = uploadData.map { UnsafeRawBufferPointer(start: $0, count: uploadSize.pointee) }
        return core.access(
            connection: connection,
            url: url.map { String(cString: $0) } ?? "/",
            method: method.map { String(cString: $0) } ?? "GET",
            version: version.map { String(cString: $0) } ?? "HTTP/1.1",
            upload: upload, uploadSize: uploadSize, requestSlot: requestSlot)
    }

    /// `MHD_RequestCompletedCallback`: releases the per-request context, whatever the outcome.
    static let completed: MHD_RequestCompletedCallback = { cls, _, requestSlot, _ in
        guard let cls else { return }
        Unmanaged<MHDServerCore>.fromOpaque(cls).takeUnretainedValue().requestCompleted(requestSlot)
    }

    /// `MHD_NotifyConnectionCallback`: counts accepted TCP connections (shows keep-alive reuse).
    static let connection: MHD_NotifyConnectionCallback = { cls, _, _, event in
        guard let cls, event == .CONNECTION_NOTIFY_STARTED else { return }
        Unmanaged<MHDServerCore>.fromOpaque(cls).takeUnretainedValue()
            .connectionsAccepted.add(1, ordering: .relaxed)
    }
}

/// Reads key/value pairs (headers, query arguments) from a connection via
/// `MHD_get_connection_values`, whose iterator is a C callback.
enum MHDValues {
    /// Collects every pair of one kind, in request order.
    /// - Parameters:
    ///   - connection: The connection, during an access-handler call.
    ///   - kind: `MHD_HEADER_KIND` or `MHD_GET_ARGUMENT_KIND`.
    /// - Returns: The pairs; a missing value is an empty string.
    static func collect(_ connection: OpaquePointer, kind: MHD_ValueKind) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &pairs) { pointer in
            _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let pairs = cls.assumingMemoryBound(to: [(name: String, value: String)].self)
                pairs.pointee.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, pointer)
        }
        return pairs
    }
}
