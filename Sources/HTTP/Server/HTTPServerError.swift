/// Why an ``HTTPServer`` could not start.
///
/// Separate from ``HTTPError`` because server start-up failures are configuration problems,
/// never retryable transport failures.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The failure class, a struct over a private enum so cases can be added later.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable { case invalidConfiguration, startFailed }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// A configuration value is out of range or unparsable (for example a non-numeric host).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// libmicrohttpd refused to start (port in use, no permission, resource limits).
        public static let startFailed = Code(.startFailed)

        /// The case name, for logs.
        public var description: String { backing.rawValue }
    }

    /// The failure class.
    public var code: Code
    /// A human-readable explanation.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The failure class.
    ///   - message: A human-readable explanation.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `HTTPServerError(code): message`, for logs.
    public var description: String { "HTTPServerError(\(code)): \(message)" }
}
