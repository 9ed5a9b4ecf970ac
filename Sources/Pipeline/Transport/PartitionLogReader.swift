/// Reads whole partitions of a topic, from their first retained record to the end they have when
/// reading starts (their high watermark): how a ``KeyedStateStore`` rebuilds its view of an
/// output partition. Nothing is committed and no consumer group is joined.
public protocol PartitionLogReader: Sendable {
    /// Reads `partitions` of `topic` to their ends.
    /// - Parameters:
    ///   - topic: the topic.
    ///   - partitions: the partition numbers.
    ///   - body: called for every record, in offset order per partition, on the calling task.
    /// - Throws: when the partitions cannot be read to their end (an unknown partition, an
    ///   unreachable or stalled cluster), what `body` throws, or `CancellationError`.
    func read(topic: String, partitions: [Int32], _ body: (InboundRecord) throws -> Void) async throws
}
