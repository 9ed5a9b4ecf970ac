/// A record to produce. The partition is left to the producer's partitioner (murmur2 of the key
/// in Kafka), which is what keeps one key in one partition.
public struct OutboundRecord: Sendable, Hashable {
    /// The topic to produce to.
    public var topic: String
    /// The record key (nil for `null`), which decides the partition.
    public var key: [UInt8]?
    /// The record value.
    public var value: [UInt8]
    /// The record headers, in order.
    public var headers: [RecordHeader]

    /// Creates a record to produce.
    public init(topic: String, key: [UInt8]?, value: [UInt8], headers: [RecordHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}
