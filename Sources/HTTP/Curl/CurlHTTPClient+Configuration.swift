extension CurlHTTPClient {
    /// Typed settings for ``CurlHTTPClient``, converted to libcurl options only at the C boundary.
    ///
    /// Defaults suit the App Store Server API: HTTP/2 over TLS with multiplexing, so a handful of
    /// connections carry hundreds of concurrent requests.
    public struct Configuration: Sendable {
        /// Deadline for establishing a connection (TCP + TLS). Kept shorter than the request
        /// timeout so an unreachable host fails fast with a retryable error.
        public var connectTimeout: Duration = .seconds(10)
        /// Whole-request deadline used by ``CurlHTTPClient/execute(_:)`` when the caller gives none.
        public var defaultRequestTimeout: Duration = .seconds(30)
        /// Upper bound on open connections across all hosts (`CURLMOPT_MAX_TOTAL_CONNECTIONS`);
        /// 0 means unlimited. Requests beyond it queue inside libcurl.
        ///
        /// A pool larger than 256 connections (HTTP/1.1 servers with hundreds of requests in flight)
        /// is split over several libcurl multi handles on the client's one thread, each with an equal
        /// share of this limit and of ``maxConnectionsPerHost`` (rounded up): libcurl 7.88 does work
        /// proportional to a multi handle's connection count on every request.
        public var maxTotalConnections: Int = 64
        /// Upper bound on open connections per host (`CURLMOPT_MAX_HOST_CONNECTIONS`); 0 means
        /// unlimited. With HTTP/2 each connection multiplexes up to ``maxConcurrentStreams`` requests
        /// (or the server's own stream limit, often 100); once every connection is full, libcurl opens
        /// new ones up to this bound, so it also caps concurrency if a server falls back to HTTP/1.1.
        public var maxConnectionsPerHost: Int = 16
        /// Prefer HTTP/2 for `https` URLs (`CURL_HTTP_VERSION_2TLS`) and multiplex requests over
        /// shared connections (`CURLPIPE_MULTIPLEX`, `CURLOPT_PIPEWAIT`). Plain `http` uses HTTP/1.1.
        public var preferHTTP2: Bool = true
        /// Streams per HTTP/2 connection (`CURLMOPT_MAX_CONCURRENT_STREAMS`).
        public var maxConcurrentStreams: Int = 100
        /// Largest response body accepted; larger ones fail with ``HTTPError/Code/tooLarge``
        /// instead of exhausting memory.
        public var maxResponseBodySize: Int = 16 * 1024 * 1024
        /// A PEM bundle of trusted CAs replacing the system bundle (`CURLOPT_CAINFO`), for pinning
        /// Apple's roots or trusting a test CA.
        public var caFile: String? = nil
        /// A directory of hashed CA certificates (`CURLOPT_CAPATH`).
        public var caPath: String? = nil
        /// The `User-Agent` header sent when the request does not set one.
        public var userAgent: String = "receiptd-http/1.0"
        /// How many idle easy handles to keep for reuse; reuse keeps per-handle caches warm and
        /// avoids allocation churn under load.
        public var maxIdleHandles: Int = 128

        /// Creates a configuration with the documented defaults.
        public init() {}

        /// Checks the values before any libcurl object is created, with precise messages.
        /// - Throws: ``HTTPError`` with code ``HTTPError/Code/invalidConfiguration``.
        public func validate() throws(HTTPError) {
            func fail(_ message: String) -> HTTPError {
                HTTPError(code: .invalidConfiguration, message: "CurlHTTPClient.Configuration: \(message)")
            }
            guard connectTimeout > .zero else { throw fail("connectTimeout must be positive, got \(connectTimeout)") }
            guard defaultRequestTimeout > .zero else {
                throw fail("defaultRequestTimeout must be positive, got \(defaultRequestTimeout)")
            }
            guard maxTotalConnections >= 0 else { throw fail("maxTotalConnections must be >= 0 (0 = unlimited)") }
            guard maxConnectionsPerHost >= 0 else { throw fail("maxConnectionsPerHost must be >= 0 (0 = unlimited)") }
            guard maxConcurrentStreams >= 1 else { throw fail("maxConcurrentStreams must be >= 1") }
            guard maxResponseBodySize > 0 else { throw fail("maxResponseBodySize must be positive") }
            guard maxIdleHandles >= 0 else { throw fail("maxIdleHandles must be >= 0") }
            if let caFile, caFile.isEmpty { throw fail("caFile must not be empty when set") }
            if let caPath, caPath.isEmpty { throw fail("caPath must not be empty when set") }
        }
    }

    /// Counters describing what the client has done, for metrics and for tests that check
    /// connection reuse.
    public struct Statistics: Sendable, Equatable {
        /// Requests that produced a response.
        public var requestsSucceeded: Int
        /// Requests that failed (transport error, cancellation or shutdown).
        public var requestsFailed: Int
        /// New connections opened (sum of `CURLINFO_NUM_CONNECTS`); far below the request count
        /// when connections are being reused.
        public var connectionsOpened: Int
    }
}
