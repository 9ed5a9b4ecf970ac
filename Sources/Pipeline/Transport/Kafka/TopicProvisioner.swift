import Kafka
import Observability

/// Creates the pipeline's topics at worker start-up when they are missing.
///
/// It first asks for each topic's partition count and only sends CreateTopics for missing ones:
/// topics usually exist (created by an operator, `Deploy/create-topics.sh`, or `receiptd broker`),
/// and librdkafka 2.0.2's mock cluster, reached from another process, does not answer
/// CreateTopics at all. A failure is logged, not fatal: the worker's consumer simply waits for
/// its topic to appear.
public struct TopicProvisioner: Sendable {
    private let bootstrapServers: [String]
    private let properties: [String: String]
    private let logger: Logger

    /// - Parameters:
    ///   - bootstrapServers: the cluster.
    ///   - properties: raw librdkafka properties (SASL/SSL).
    ///   - logger: where missing or failed topics are reported.
    public init(bootstrapServers: [String], properties: [String: String], logger: Logger) {
        self.bootstrapServers = bootstrapServers
        self.properties = properties
        self.logger = logger
    }

    /// Makes sure every topic in `names` exists, creating missing ones with `configs[name]`.
    public func ensure(_ names: [String], partitions: Int, replicationFactor: Int,
                       configs: [String: [String: String]] = [:]) async {
        do {
            let admin = try KafkaAdminClient(bootstrapServers: bootstrapServers, additionalProperties: properties)
            var missing: [String] = []
            for name in names {
                let count = try? await admin.partitionCount(topic: name)
                if (count ?? 0) == 0 { missing.append(name) }
            }
            guard !missing.isEmpty else { return }
            logger.notice("creating missing topics", metadata: ["kafka.topics": .string(missing.joined(separator: ","))])
            try await admin.createTopics(missing.map {
                KafkaTopicSpecification(name: $0, partitions: partitions, replicationFactor: replicationFactor,
                                        config: configs[$0] ?? [:])
            }, timeout: .seconds(10))
        } catch {
            logger.warning("could not create topics; continuing", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
        }
    }
}
