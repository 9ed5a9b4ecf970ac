import struct Foundation.Date

/// A message to produce with ``KafkaProducer/send(_:)``.
public struct KafkaProducerMessage: Sendable, Hashable {
    /// The destination topic.
    public var topic: String
    /// The destination partition, or `nil` to let the partitioner choose from ``key``
    /// (librdkafka's default `consistent_random`: same key, same partition).
    public var partition: Int32?
    /// The record key: the business key that decides the partition and therefore ordering.
    public var key: [UInt8]?
    /// The payload. An empty array is produced as a null value (a tombstone on compacted topics).
    public var value: [UInt8]
    /// Record headers, in order.
    public var headers: [KafkaHeader]
    /// The record's create time, or `nil` to let librdkafka stamp the current time.
    public var timestamp: Date?

    /// Creates a message.
    /// - Parameters:
    ///   - topic: The destination topic.
    ///   - partition: An explicit partition, or `nil` for the partitioner.
    ///   - key: The record key, or `nil` for none.
    ///   - value: The payload.
    ///   - headers: Record headers.
    ///   - timestamp: The create time, or `nil` for "now".
    public init(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]? = nil,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        timestamp: Date? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// Creates a message with a textual key, the common case for business keys.
    /// - Parameters:
    ///   - topic: The destination topic.
    ///   - partition: An explicit partition, or `nil` for the partitioner.
    ///   - key: The key, encoded as UTF-8.
    ///   - value: The payload.
    ///   - headers: Record headers.
    ///   - timestamp: The create time, or `nil` for "now".
    public init(
        topic: String,
        partition: Int32? = nil,
        key: String,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        timestamp: Date? = nil
    ) {
        self.init(
            topic: topic, partition: partition, key: Array(key.utf8), value: value,
            headers: headers, timestamp: timestamp)
    }
}
