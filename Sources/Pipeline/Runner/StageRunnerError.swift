/// Why ``StageRunner/run()`` ended with an error, as an opaque code plus a message.
public struct StageRunnerError: Error, Sendable, CustomStringConvertible {
    /// The class of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// `run()` was called on a runner that already ran.
        public static let alreadyRunning = Code("alreadyRunning")
        /// The sink could not deliver a record's outputs: the record stays unprocessed (its offset
        /// is not stored) and the runner stopped so a restart redelivers it.
        public static let deliveryFailed = Code("deliveryFailed")
        /// The source's event stream failed.
        public static let sourceFailed = Code("sourceFailed")
    }

    /// The class of failure, for programs.
    public var code: Code
    /// What happened, for people.
    public var message: String
    /// The error that caused it, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        underlying.map { "\(code): \(message): \($0)" } ?? "\(code): \(message)"
    }
}

/// Processing exceeded ``StageRunnerConfiguration/processingTimeout``: a transient `timeout`.
public struct ProcessingTimeoutError: ClassifiedError, CustomStringConvertible {
    /// The limit that was exceeded.
    public var timeout: Duration
    public var disposition: FailureDisposition { .transient }
    public var reason: ReasonCode { .timeout }

    /// Creates the error for a limit.
    public init(timeout: Duration) {
        self.timeout = timeout
    }

    public var description: String { "processing did not finish within \(timeout)" }
}
