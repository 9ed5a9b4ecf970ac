import struct Foundation.Date

/// Where a message landed: returned once the broker has acknowledged it
/// (with `acks=all`, once every in-sync replica has it).
///
/// Only after this report may a consumer store the offset of the input that caused
/// the message; that ordering is what makes the pipeline at-least-once.
public struct KafkaDeliveryReport: Sendable, Hashable {
    /// The topic the message was written to.
    public var topic: String
    /// The partition the message was written to.
    public var partition: Int32
    /// The offset assigned by the broker. librdkafka reports
    /// ``KafkaTopicPartitionOffset/invalidOffset`` for some idempotent retries, when the
    /// broker's answer did not carry one.
    public var offset: Int64
    /// The record timestamp, when librdkafka knows it.
    public var timestamp: Date?

    /// Creates a report (used by the producer and by test doubles).
    /// - Parameters:
    ///   - topic: The topic.
    ///   - partition: The partition.
    ///   - offset: The offset.
    ///   - timestamp: The record timestamp.
    public init(topic: String, partition: Int32, offset: Int64, timestamp: Date?) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.timestamp = timestamp
    }
}
