/// An error from the Kafka layer: a librdkafka error code or one of our own codes,
/// with a human-readable message and a classification.
///
/// Callers decide what to do from ``isRetriable`` and ``isFatal`` rather than from
/// matching codes, the way swift-kafka-client's `KafkaError` is used; ``code`` is
/// there for the cases (tests, metrics labels) that need the exact reason.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// The error code: librdkafka's `rd_kafka_resp_err_t` number, or one of ours.
    ///
    /// librdkafka codes are broker errors (`> 0`) and local errors (`-200 ..< -100`);
    /// our own codes live at `-10_000` and below so they never collide.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The raw number (an `rd_kafka_resp_err_t` value for librdkafka codes).
        public let rawValue: Int32

        /// Wraps a raw code, for example one received from a broker.
        /// - Parameter rawValue: The `rd_kafka_resp_err_t` number or one of our codes.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        /// The symbolic name (`_QUEUE_FULL`, `NOT_LEADER_FOR_PARTITION`, `INVALID_CONFIGURATION`),
        /// taken from librdkafka for its codes so logs match its documentation.
        public var name: String {
            if let own = Self.ownNames[rawValue] { return own }
            return RDKafkaErrorNames.name(of: rawValue)
        }

        /// `NAME (number)`.
        public var description: String { "\(name) (\(rawValue))" }

        // MARK: Our own codes (configuration, validation and lifecycle)

        /// A configuration value failed ``KafkaProducerConfiguration/validate()`` or
        /// ``KafkaConsumerConfiguration/validate()``, or librdkafka rejected a property.
        public static let invalidConfiguration = Code(rawValue: -10_001)
        /// The client was closed before or during the operation.
        public static let clientClosed = Code(rawValue: -10_002)
        /// An offset was stored, or a partition paused, that is not assigned to this consumer.
        public static let partitionNotAssigned = Code(rawValue: -10_003)
        /// The caller's task was cancelled before the message was handed to librdkafka.
        public static let cancelled = Code(rawValue: -10_004)
        /// An argument (topic name, partition, offset) was invalid.
        public static let invalidArgument = Code(rawValue: -10_005)

        /// A consumer's fetching skipped offsets of a partition (a librdkafka position error); the
        /// consumer sent the partition back to the first offset skipped.
        public static let skippedOffsets = Code(rawValue: -10_006)

        private static let ownNames: [Int32: String] = [
            -10_001: "INVALID_CONFIGURATION",
            -10_002: "CLIENT_CLOSED",
            -10_003: "PARTITION_NOT_ASSIGNED",
            -10_004: "CANCELLED",
            -10_005: "INVALID_ARGUMENT",
            -10_006: "SKIPPED_OFFSETS",
        ]
    }

    /// What went wrong, as a code.
    public let code: Code
    /// What went wrong, in words (librdkafka's error string, or our precise message).
    public let message: String
    /// Whether repeating the same operation later may succeed (a broker was down, a queue
    /// was full, a request timed out). Stages map this to a transient failure.
    public let isRetriable: Bool
    /// Whether the client is unusable from now on and must be recreated (for example an
    /// idempotent producer that lost its sequence state).
    public let isFatal: Bool

    /// Creates an error.
    /// - Parameters:
    ///   - code: The code.
    ///   - message: A precise description.
    ///   - isRetriable: Whether retrying may succeed; defaults to the code's usual classification.
    ///   - isFatal: Whether the client must be recreated.
    public init(code: Code, message: String, isRetriable: Bool? = nil, isFatal: Bool = false) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable ?? RDKafkaErrorNames.isRetriable(code.rawValue)
        self.isFatal = isFatal
    }

    /// `KafkaError(NAME (number)): message [retriable] [fatal]`.
    public var description: String {
        var text = "KafkaError(\(code)): \(message)"
        if isRetriable { text += " [retriable]" }
        if isFatal { text += " [fatal]" }
        return text
    }
}

extension KafkaError {
    /// A configuration error with a precise message.
    static func invalidConfiguration(_ message: String) -> KafkaError {
        KafkaError(code: .invalidConfiguration, message: message, isRetriable: false)
    }

    /// The client has been closed.
    static func clientClosed(_ what: String) -> KafkaError {
        KafkaError(code: .clientClosed, message: "\(what) is closed", isRetriable: false)
    }

    /// An invalid argument with a precise message.
    static func invalidArgument(_ message: String) -> KafkaError {
        KafkaError(code: .invalidArgument, message: message, isRetriable: false)
    }
}
