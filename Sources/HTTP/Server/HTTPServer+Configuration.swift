extension HTTPServer {
    /// Typed settings for ``HTTPServer``.
    public struct Configuration: Sendable {
        /// The numeric address to bind: an IPv4 or IPv6 literal, or `localhost` (127.0.0.1).
        /// Defaults to loopback so test and demo servers are never exposed by accident.
        public var host: String
        /// The TCP port; 0 asks the kernel for a free ephemeral port (read it back from
        /// ``HTTPServer/port``), which keeps parallel tests from colliding.
        public var port: Int
        /// libmicrohttpd worker threads, each with its own epoll loop. Handlers run as Swift tasks
        /// on suspended connections, so this bounds socket I/O parallelism, not handler concurrency.
        public var threadPoolSize: Int
        /// Largest accepted request body; larger requests get `413 Payload Too Large`.
        public var maxRequestBodySize: Int
        /// Idle keep-alive connections are closed after this long (whole seconds, at least 1).
        public var connectionTimeout: Duration
        /// Maximum simultaneous connections; 0 keeps libmicrohttpd's default.
        public var connectionLimit: Int
        /// Let libmicrohttpd print its own diagnostics to stderr; useful when debugging only.
        public var logErrors: Bool

        /// Creates a configuration.
        /// - Parameters:
        ///   - host: The address to bind; defaults to `127.0.0.1`.
        ///   - port: The port; 0 (default) picks an ephemeral port.
        ///   - threadPoolSize: libmicrohttpd worker threads; defaults to 2.
        ///   - maxRequestBodySize: Body limit in bytes; defaults to 1 MiB.
        ///   - connectionTimeout: Idle connection timeout; defaults to 30 s.
        ///   - connectionLimit: Connection cap; 0 (default) keeps libmicrohttpd's.
        ///   - logErrors: Whether libmicrohttpd logs to stderr; defaults to `false`.
        public init(
            host: String = "127.0.0.1", port: Int = 0, threadPoolSize: Int = 2,
            maxRequestBodySize: Int = 1 << 20, connectionTimeout: Duration = .seconds(30),
            connectionLimit: Int = 0, logErrors: Bool = false
        ) {
            self.host = host
            self.port = port
            self.threadPoolSize = threadPoolSize
            self.maxRequestBodySize = maxRequestBodySize
            self.connectionTimeout = connectionTimeout
            self.connectionLimit = connectionLimit
            self.logErrors = logErrors
        }

        /// Checks ranges before libmicrohttpd sees the values, with precise messages.
        /// - Throws: ``HTTPServerError`` with code ``HTTPServerError/Code/invalidConfiguration``.
        public func validate() throws(HTTPServerError) {
            func fail(_ message: String) -> HTTPServerError {
                HTTPServerError(code: .invalidConfiguration, message: "HTTPServer.Configuration: \(message)")
            }
            guard (0...65535).contains(port) else { throw fail("port must be in 0...65535, got \(port)") }
            guard (1...1024).contains(threadPoolSize) else {
                throw fail("threadPoolSize must be in 1...1024, got \(threadPoolSize)")
            }
            guard maxRequestBodySize >= 0 else { throw fail("maxRequestBodySize must be >= 0") }
            guard connectionTimeout >= .seconds(1) else { throw fail("connectionTimeout must be >= 1 s") }
            guard connectionLimit >= 0 else { throw fail("connectionLimit must be >= 0 (0 = default)") }
        }
    }

    /// Counters for metrics and for tests that check connection reuse.
    public struct Statistics: Sendable, Equatable {
        /// TCP connections accepted since start; far below the request count when clients reuse connections.
        public var connectionsAccepted: Int
        /// Requests whose handler has returned.
        public var requestsHandled: Int
        /// Requests rejected with 413 because their body was too large.
        public var requestsRejectedTooLarge: Int
    }
}
