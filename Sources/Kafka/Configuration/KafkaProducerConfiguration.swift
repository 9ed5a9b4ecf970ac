/// Typed configuration for ``KafkaProducer``.
///
/// The fields cover what receiptd tunes; anything else (SASL, SSL, buffer sizes) goes
/// through ``additionalProperties`` with librdkafka's own key names. The struct is
/// converted to librdkafka's string properties only at the C boundary.
public struct KafkaProducerConfiguration: Sendable {
    /// How many replicas must acknowledge a write before its delivery report succeeds.
    public enum Acks: String, Sendable, Hashable, CaseIterable {
        /// Every in-sync replica (`acks=all`): required for idempotence and at-least-once.
        case all
        /// Only the partition leader (`acks=1`).
        case leaderOnly
        /// No acknowledgement (`acks=0`); delivery reports then carry no offset.
        case fireAndForget

        var propertyValue: String {
            switch self {
            case .all: "all"
            case .leaderOnly: "1"
            case .fireAndForget: "0"
            }
        }
    }

    /// Batch compression (`compression.codec`).
    public enum Compression: String, Sendable, Hashable, CaseIterable {
        /// No compression.
        case none
        /// gzip: smallest, slowest.
        case gzip
        /// Snappy.
        case snappy
        /// LZ4: a good default for throughput.
        case lz4
        /// Zstandard.
        case zstd
    }

    /// The initial brokers, each `host:port`. Clients discover the rest from metadata.
    public var bootstrapServers: [String]
    /// The `client.id` reported to brokers, which shows up in broker logs and quotas.
    public var clientId: String = "receiptd"
    /// Idempotent production (`enable.idempotence`): retries never duplicate or reorder
    /// messages. On by default; the pipeline's at-least-once story relies on it.
    public var enableIdempotence: Bool = true
    /// Required acknowledgements; must be ``Acks/all`` when idempotence is on.
    public var acks: Acks = .all
    /// How long to wait for more messages before sending a batch (`linger.ms`).
    public var linger: Duration = .milliseconds(5)
    /// How long a message may take, retries included, before its delivery report fails
    /// with ``KafkaError/Code/messageTimedOut`` (`message.timeout.ms`).
    public var messageTimeout: Duration = .seconds(60)
    /// Batch compression.
    public var compression: Compression = .none
    /// How often librdkafka reports its statistics to ``onStatistics`` (`statistics.interval.ms`);
    /// nil (the default) turns them off.
    public var statisticsInterval: Duration?
    /// Called on the producer's poll thread with each statistics report (`messageCount`: messages
    /// queued and in flight, broker round-trip). Keep it short.
    public var onStatistics: (@Sendable (KafkaStatistics) -> Void)?
    /// Raw librdkafka properties passed through unchanged (for example
    /// `security.protocol`, `sasl.mechanisms`, `ssl.ca.location`,
    /// `queue.buffering.max.messages`). Keys owned by a typed field are rejected by ``validate()``.
    public var additionalProperties: [String: String] = [:]

    /// Creates a configuration with defaults for everything but the brokers.
    /// - Parameter bootstrapServers: The initial brokers, each `host:port`.
    public init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }

    /// Keys that a typed field owns, with the field to use instead.
    static let reservedKeys: [String: String] = [
        "bootstrap.servers": "set bootstrapServers", "metadata.broker.list": "set bootstrapServers",
        "client.id": "set clientId", "enable.idempotence": "set enableIdempotence",
        "acks": "set acks", "request.required.acks": "set acks",
        "linger.ms": "set linger", "queue.buffering.max.ms": "set linger",
        "message.timeout.ms": "set messageTimeout", "delivery.timeout.ms": "set messageTimeout",
        "compression.codec": "set compression", "compression.type": "set compression",
        "statistics.interval.ms": "set statisticsInterval",
    ]

    /// Checks every field and reports the first problem precisely, before any client exists.
    /// - Throws: ``KafkaError`` with code ``KafkaError/Code/invalidConfiguration``.
    public func validate() throws {
        let field = "KafkaProducerConfiguration"
        let problems: [String?] = [
            KafkaNames.bootstrapProblem(bootstrapServers, field: "\(field).bootstrapServers"),
            clientId.isEmpty ? "\(field).clientId must not be empty" : nil,
            enableIdempotence && acks != .all
                ? "\(field).acks must be .all when enableIdempotence is true (got .\(acks)); librdkafka requires acks=all for idempotence"
                : nil,
            KafkaNames.durationProblem(
                linger, field: "\(field).linger", atLeastMilliseconds: 0, atMostMilliseconds: 900_000),
            KafkaNames.durationProblem(
                messageTimeout, field: "\(field).messageTimeout", atLeastMilliseconds: 1,
                atMostMilliseconds: Int64(Int32.max)),
            messageTimeout <= linger
                ? "\(field).messageTimeout (\(messageTimeout)) must be longer than linger (\(linger))" : nil,
            KafkaNames.reservedKeyProblem(additionalProperties, reserved: Self.reservedKeys),
            statisticsInterval.flatMap {
                KafkaNames.durationProblem($0, field: "\(field).statisticsInterval", atLeastMilliseconds: 1,
                                           atMostMilliseconds: 86_400_000)
            },
        ]
        if let problem = problems.lazy.compactMap({ $0 }).first {
            throw KafkaError.invalidConfiguration(problem)
        }
    }

    /// librdkafka's string properties for this configuration.
    var dictionary: [String: String] {
        var properties = additionalProperties
        properties["bootstrap.servers"] = bootstrapServers.joined(separator: ",")
        properties["client.id"] = clientId
        properties["enable.idempotence"] = enableIdempotence ? "true" : "false"
        properties["acks"] = acks.propertyValue
        properties["linger.ms"] = String(linger.kafkaMilliseconds)
        properties["message.timeout.ms"] = String(messageTimeout.kafkaMilliseconds)
        properties["compression.codec"] = compression.rawValue
        if let statisticsInterval, onStatistics != nil {
            properties["statistics.interval.ms"] = String(statisticsInterval.kafkaMilliseconds)
        }
        return properties
    }
}
