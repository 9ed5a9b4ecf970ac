/// A topic to create with ``KafkaAdminClient/createTopics(_:timeout:)``.
public struct KafkaTopicSpecification: Sendable, Hashable {
    /// The topic name.
    public var name: String
    /// The number of partitions: the upper bound on consumer parallelism.
    public var partitions: Int
    /// The number of replicas of each partition.
    public var replicationFactor: Int
    /// Topic-level configuration (for example `retention.ms`, `cleanup.policy`).
    public var config: [String: String]

    /// Creates a specification.
    /// - Parameters:
    ///   - name: The topic name.
    ///   - partitions: The number of partitions (at least 1).
    ///   - replicationFactor: The number of replicas (at least 1).
    ///   - config: Topic-level configuration.
    public init(name: String, partitions: Int, replicationFactor: Int = 1, config: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.config = config
    }

    /// Checks name, partitions and replication factor before anything is sent.
    /// - Throws: ``KafkaError`` with code ``KafkaError/Code/invalidArgument``.
    public func validate() throws {
        if let problem = KafkaNames.topicProblem(name, field: "KafkaTopicSpecification.name") {
            throw KafkaError.invalidArgument(problem)
        }
        guard partitions >= 1 else {
            throw KafkaError.invalidArgument(
                "KafkaTopicSpecification.partitions for \"\(name)\" must be at least 1, got \(partitions)")
        }
        guard replicationFactor >= 1 else {
            throw KafkaError.invalidArgument(
                "KafkaTopicSpecification.replicationFactor for \"\(name)\" must be at least 1, got \(replicationFactor)")
        }
    }
}
