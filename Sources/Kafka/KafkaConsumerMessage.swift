import struct Foundation.Date

/// A message read by ``KafkaConsumer``, copied out of librdkafka so it can cross tasks freely.
public struct KafkaConsumerMessage: Sendable, Hashable {
    /// The topic it was read from.
    public var topic: String
    /// The partition it was read from.
    public var partition: Int32
    /// Its offset in the partition. Pass the message to ``KafkaConsumer/storeOffset(_:)``
    /// once it has been processed; the consumer stores `offset + 1`.
    public var offset: Int64
    /// The record key, or `nil` when the record has none.
    public var key: [UInt8]?
    /// The payload (empty for a null value).
    public var value: [UInt8]
    /// Record headers, in order.
    public var headers: [KafkaHeader]
    /// The record timestamp (create or log-append time), when present.
    public var timestamp: Date?
    /// Which assignment the consumer received it under (a new, larger number for each assignment,
    /// shared by the partitions assigned together; 0 outside a consumer). Compare with
    /// ``KafkaConsumer/assignmentGeneration(of:)`` to tell a message fetched before a revocation
    /// from one of a later assignment of the same partition.
    public var assignmentGeneration: UInt64 = 0

    /// Creates a message (used by the consumer and by in-memory test doubles).
    /// - Parameters:
    ///   - topic: The topic.
    ///   - partition: The partition.
    ///   - offset: The offset.
    ///   - key: The key.
    ///   - value: The payload.
    ///   - headers: The headers.
    ///   - timestamp: The timestamp.
    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8],
        headers: [KafkaHeader], timestamp: Date?
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// The topic-partition this message belongs to.
    public var topicPartition: KafkaTopicPartition {
        KafkaTopicPartition(topic: topic, partition: partition)
    }
}
