/// A topic-partition with an offset: a start position for explicit assignment, or a
/// committed position returned by ``KafkaConsumer/committed(_:)``.
///
/// Besides real offsets (`>= 0`) the offset may hold one of librdkafka's logical
/// offsets, exposed as the static constants below.
public struct KafkaTopicPartitionOffset: Sendable, Hashable, CustomStringConvertible {
    /// The topic name.
    public var topic: String
    /// The 0-based partition number.
    public var partition: Int32
    /// The offset, or one of the logical offsets (``beginningOffset``, ``endOffset``,
    /// ``storedOffset``, ``invalidOffset``).
    public var offset: Int64

    /// Logical offset: the oldest message still in the partition.
    public static let beginningOffset: Int64 = -2
    /// Logical offset: the next message produced after the assignment.
    public static let endOffset: Int64 = -1
    /// Logical offset: the group's committed offset (falling back to `auto.offset.reset`).
    public static let storedOffset: Int64 = -1000
    /// Logical offset: no offset (for example, nothing committed yet).
    public static let invalidOffset: Int64 = -1001

    /// Creates a position.
    /// - Parameters:
    ///   - topic: The topic name.
    ///   - partition: The 0-based partition number.
    ///   - offset: A real offset (`>= 0`) or one of the logical offsets.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// Creates a position for `topicPartition`.
    /// - Parameters:
    ///   - topicPartition: The partition.
    ///   - offset: A real offset (`>= 0`) or one of the logical offsets.
    public init(_ topicPartition: KafkaTopicPartition, offset: Int64) {
        self.init(topic: topicPartition.topic, partition: topicPartition.partition, offset: offset)
    }

    /// Start at the oldest retained message, as a replay of a whole partition needs.
    /// - Parameters:
    ///   - topic: The topic name.
    ///   - partition: The 0-based partition number.
    /// - Returns: A position at ``beginningOffset``.
    public static func beginning(topic: String, partition: Int32) -> KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: beginningOffset)
    }

    /// Start after the newest message, so only messages produced from now on are read.
    /// - Parameters:
    ///   - topic: The topic name.
    ///   - partition: The 0-based partition number.
    /// - Returns: A position at ``endOffset``.
    public static func end(topic: String, partition: Int32) -> KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: endOffset)
    }

    /// Start at the group's committed offset, as a group member would.
    /// - Parameters:
    ///   - topic: The topic name.
    ///   - partition: The 0-based partition number.
    /// - Returns: A position at ``storedOffset``.
    public static func stored(topic: String, partition: Int32) -> KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: storedOffset)
    }

    /// The topic-partition without the offset.
    public var topicPartition: KafkaTopicPartition {
        KafkaTopicPartition(topic: topic, partition: partition)
    }

    /// `topic[partition]@offset`, with logical offsets spelled out.
    public var description: String {
        let position: String
        switch offset {
        case Self.beginningOffset: position = "beginning"
        case Self.endOffset: position = "end"
        case Self.storedOffset: position = "stored"
        case Self.invalidOffset: position = "invalid"
        default: position = String(offset)
        }
        return "\(topic)[\(partition)]@\(position)"
    }
}
