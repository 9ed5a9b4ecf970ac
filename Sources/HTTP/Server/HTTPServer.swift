import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server over libmicrohttpd, for the fake App Store used in demos and tests
/// and for health and metrics endpoints.
///
/// ```swift
/// let server = try HTTPServer(configuration: .init(port: 0, threadPoolSize: 2)) { request in
///     try? await Task.sleep(for: .milliseconds(250))       // latency knob: costs no thread
///     return .text("hello \(request.path)")
/// }
/// print(server.port)
/// server.stop()
/// ```
///
/// The handler is async and runs as a Swift task while libmicrohttpd keeps the connection
/// suspended (see ``MHDServerCore``), so slow handlers never tie up libmicrohttpd threads.
/// Bodies are accumulated up to ``Configuration/maxRequestBodySize``; beyond it the client gets
/// `413` without the handler being called. A handler can inject faults by returning
/// ``HTTPServerResponse/dropConnection``.
public final class HTTPServer: Sendable {
    /// The configuration the server was started with.
    public let configuration: Configuration
    /// The bound TCP port (the kernel's choice when ``Configuration/port`` was 0).
    public let port: Int
    private let core: MHDServerCore
    /// The `struct MHD_Daemon *`, cleared by ``stop()``.
    private let daemon: Mutex<DaemonPointer?>

    private struct DaemonPointer: @unchecked Sendable { let raw: OpaquePointer }

    /// Starts listening and serving immediately.
    /// - Parameters:
    ///   - configuration: Address, threads, limits.
    ///   - handler: Called once per complete request, concurrently; its response (or fault) is sent back.
    /// - Throws: ``HTTPServerError`` when the configuration is invalid or the daemon cannot start.
    public init(
        configuration: Configuration,
        handler: @escaping @Sendable (HTTPServerRequest) async -> HTTPServerResponse
    ) throws(HTTPServerError) {
        try configuration.validate()
        let core = MHDServerCore(maxBodySize: configuration.maxRequestBodySize, handler: handler)
        var flags = MHD_USE_AUTO.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if configuration.logErrors { flags |= MHD_USE_ERROR_LOG.rawValue }
        let address = try SocketAddress(host: configuration.host, port: configuration.port)
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        let cls = Unmanaged.passUnretained(core).toOpaque()
        let started = address.withSockaddr { sockaddr in
            CMicroHTTPD_start_daemon(
                flags, UInt16(configuration.port), sockaddr,
                UInt32(configuration.threadPoolSize),
                UInt32(clamping: configuration.connectionTimeout.components.seconds),
                UInt32(clamping: configuration.connectionLimit),
                MHDCallbacks.access, cls,
                MHDCallbacks.completed, cls,
                MHDCallbacks.connection, cls)
        }
        guard let started else {
            throw HTTPServerError(
                code: .startFailed,
                message: "MHD_start_daemon failed for \(configuration.host):\(configuration.port) (port in use or invalid options)")
        }
        let bound = Int(CMicroHTTPD_get_daemon_info_bind_port(started))
        self.configuration = configuration
        self.core = core
        self.daemon = Mutex(DaemonPointer(raw: started))
        self.port = bound != 0 ? bound : configuration.port
    }

    deinit {
        stop()
    }

    /// Stops accepting connections, closes open ones and joins libmicrohttpd's threads.
    /// Requests whose handler is still running are closed without a response; their tasks finish
    /// in the background and their results are discarded. Safe to call more than once.
    ///
    /// - Important: Blocks the calling thread while libmicrohttpd joins its threads (milliseconds).
    public func stop() {
        guard let daemon = daemon.withLock({ pointer in defer { pointer = nil }; return pointer }) else { return }
        core.beginStop()
        MHD_stop_daemon(daemon.raw)
    }

    /// Counters for metrics and for tests that check connection reuse.
    public var statistics: Statistics {
        Statistics(
            connectionsAccepted: core.connectionsAccepted.load(ordering: .relaxed),
            requestsHandled: core.requestsHandled.load(ordering: .relaxed),
            requestsRejectedTooLarge: core.requestsTooLarge.load(ordering: .relaxed))
    }
}
