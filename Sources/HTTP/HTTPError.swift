/// A transport-level HTTP failure: no usable response was received.
///
/// Carries an opaque ``Code`` for classification, the underlying libcurl code and message for
/// diagnosis, and ``isRetryable`` so retry policy never has to know libcurl numbers.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The failure class. A struct over a private enum, so cases can be added without breaking
    /// exhaustive `switch`es in callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case timeout, connectionFailed, connectionReset, dnsFailure, tls, tooLarge
            case invalidRequest, invalidConfiguration, shutdown, other
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The request did not finish within its deadline (or the connect timeout). Retryable.
        public static let timeout = Code(.timeout)
        /// No connection could be established (refused, unreachable). Retryable.
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection dropped mid-request, or the server closed it without replying. Retryable.
        public static let connectionReset = Code(.connectionReset)
        /// The host name could not be resolved. Retryable (resolvers fail transiently).
        public static let dnsFailure = Code(.dnsFailure)
        /// TLS handshake or certificate verification failed. Not retryable: it is configuration or an attack.
        public static let tls = Code(.tls)
        /// The response body exceeded the configured maximum. Not retryable.
        public static let tooLarge = Code(.tooLarge)
        /// The request itself is malformed (bad URL, bad header). Not retryable.
        public static let invalidRequest = Code(.invalidRequest)
        /// The client configuration is invalid (bad timeout, unreadable CA file). Not retryable.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The client was shut down before the request completed. Not retryable on this client.
        public static let shutdown = Code(.shutdown)
        /// Anything else libcurl reported. Not retryable.
        public static let other = Code(.other)

        /// The case name, for logs.
        public var description: String { backing.rawValue }
    }

    /// The failure class.
    public var code: Code
    /// A human-readable explanation (libcurl's error buffer when available).
    public var message: String
    /// The raw `CURLcode` when the failure came from libcurl, for diagnosis only.
    public var curlCode: Int?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The failure class.
    ///   - message: A human-readable explanation.
    ///   - curlCode: The raw libcurl code, if any.
    public init(code: Code, message: String, curlCode: Int? = nil) {
        self.code = code
        self.message = message
        self.curlCode = curlCode
    }

    /// Whether sending the same request again may succeed: network failures and timeouts are
    /// retryable; TLS, size, request, configuration and shutdown failures are not.
    public var isRetryable: Bool {
        switch code {
        case .timeout, .connectionFailed, .connectionReset, .dnsFailure: true
        default: false
        }
    }

    /// `HTTPError(code): message [curl N]`, for logs.
    public var description: String {
        let curl = curlCode.map { " [curl \($0)]" } ?? ""
        return "HTTPError(\(code)): \(message)\(curl)"
    }
}
