import Foundation

/// A record as consumed: the bytes plus everything needed for provenance and offset storage.
///
/// Optional members are spelled `Optional<T>`, as in ``VerifiedTransaction``, whose documentation
/// says why.
public struct InboundRecord: Sendable, Hashable {
    /// The topic it was consumed from.
    public var topic: String
    /// Its partition (Kafka's `int32`).
    public var partition: Int32
    /// Its offset within the partition (Kafka's `int64`).
    public var offset: Int64
    /// The record key (nil for Kafka's `null` key).
    public var key: Optional<[UInt8]>
    /// The record value, exactly as stored.
    public var value: [UInt8]
    /// The record headers, in order.
    public var headers: [RecordHeader]
    /// The Kafka timestamp (create time or log-append time).
    public var timestamp: Date
    /// The assignment it was fetched under (``AssignmentEpoch``).
    public var epoch: AssignmentEpoch

    /// Creates a record (sources and tests build these).
    public init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8],
                headers: [RecordHeader] = [], timestamp: Date, epoch: AssignmentEpoch = .initial) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
        self.epoch = epoch
    }

    /// The partition this record belongs to.
    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }
    /// Where this record sits (what ``RecordSource/storeOffsets(_:)`` takes).
    public var position: RecordPosition { RecordPosition(topicPartition: topicPartition, offset: offset) }
}
