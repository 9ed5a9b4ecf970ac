import Observability

/// One partition of one topic, the unit of ordering, assignment and offset storage in Kafka.
public struct TopicPartition: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The topic name.
    public var topic: String
    /// Kafka's partition number (`int32`).
    public var partition: Int32

    /// Creates a topic-partition.
    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    /// Hashes the partition with the topic's length and last eight bytes, not the whole name: the
    /// runner and the sources look partitions up several times per record, and the topics one
    /// worker reads differ in their ends (`….retry.1`, `….retry.2`); equality still compares names.
    public func hash(into hasher: inout Hasher) {
        let tail = topic.withUTF8InPlace { bytes -> UInt64 in
            var tail: UInt64 = 0
            for byte in bytes.suffix(8) { tail = tail << 8 | UInt64(byte) }
            return tail ^ UInt64(bytes.count) << 56
        }
        hasher.combine(tail)
        hasher.combine(partition)
    }

    public static func < (lhs: TopicPartition, rhs: TopicPartition) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }

    public var description: String { "\(topic)[\(partition)]" }
}

/// Where one record sits: topic, partition and offset.
public struct RecordPosition: Hashable, Sendable, CustomStringConvertible {
    /// The partition.
    public var topicPartition: TopicPartition
    /// Kafka's offset (`int64`).
    public var offset: Int64

    /// Creates a position.
    public init(topicPartition: TopicPartition, offset: Int64) {
        self.topicPartition = topicPartition
        self.offset = offset
    }

    /// Creates a position from its parts.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.init(topicPartition: TopicPartition(topic: topic, partition: partition), offset: offset)
    }

    public var description: String { "\(topicPartition)@\(offset)" }
}
