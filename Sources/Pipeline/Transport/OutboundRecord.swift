/// A record to produce. Unless ``partition`` is set, the partition is left to the producer's
/// partitioner (a hash of the key), which is what keeps one key in one partition.
///
/// Optional members are spelled `Optional<T>`, as in ``VerifiedTransaction``, whose documentation
/// says why.
public struct OutboundRecord: Sendable, Hashable {
    /// The topic to produce to.
    public var topic: String
    /// The record key (nil for `null`).
    public var key: Optional<[UInt8]>
    /// The record value.
    public var value: [UInt8]
    /// The record headers, in order.
    public var headers: [RecordHeader]
    /// An explicit partition, or nil to let the partitioner choose one from the key. Set for
    /// co-partitioned outputs (``OutputPartitioning/inputPartition``); the partition must exist,
    /// or delivery fails.
    public var partition: Optional<Int32>

    /// Creates a record to produce.
    /// - Parameters:
    ///   - topic: the topic.
    ///   - key: the record key (nil for `null`).
    ///   - value: the record value.
    ///   - headers: the record headers, in order.
    ///   - partition: an explicit partition, or nil for the key's partition.
    public init(topic: String, key: [UInt8]?, value: [UInt8], headers: [RecordHeader] = [], partition: Int32? = nil) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
        self.partition = partition
    }
}
