/// A topic and partition pair: the unit of assignment, pausing and offset storage.
public struct KafkaTopicPartition: Sendable, Hashable, CustomStringConvertible {
    /// The topic name.
    public var topic: String
    /// The partition number within ``topic`` (0-based).
    public var partition: Int32

    /// Creates a topic-partition pair.
    /// - Parameters:
    ///   - topic: The topic name.
    ///   - partition: The 0-based partition number.
    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    /// `topic[partition]`, the compact form used in logs and error messages.
    public var description: String { "\(topic)[\(partition)]" }
}

extension KafkaTopicPartition: Comparable {
    /// Orders by topic, then partition, so assignment lists print and compare deterministically.
    public static func < (lhs: KafkaTopicPartition, rhs: KafkaTopicPartition) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }
}
