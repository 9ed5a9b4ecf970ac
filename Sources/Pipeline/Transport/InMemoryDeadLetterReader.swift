import Synchronization

/// The ``DeadLetterReader`` of ``InMemoryTransport``: reads a topic's partitions directly, from
/// the requested starts to the ends they had when opened.
public final class InMemoryDeadLetterReader: DeadLetterReader {
    private let transport: InMemoryTransport
    private let topic: String
    private let opened = Mutex<[DeadLetterRange]>([])

    /// - Parameters:
    ///   - transport: the in-memory cluster.
    ///   - topic: the dead-letter topic (default `receipts.dead-letter`).
    public init(transport: InMemoryTransport, topic: String = Topics().deadLetter) {
        self.transport = transport
        self.topic = topic
    }

    public func open(partition: Int32?, fromOffset: Int64?, toOffset: Int64?) async throws -> [DeadLetterRange] {
        let count = transport.partitionCount(of: topic)
        if let partition, !(0..<count).contains(partition) {
            throw PipelineConfigurationError("\(topic) has no partition \(partition) (it has \(count))")
        }
        let partitions = partition.map { [$0] } ?? Array(0..<count)
        let ranges = partitions.compactMap { p -> DeadLetterRange? in
            let high = transport.endOffset(of: topic, partition: p)
            let range = DeadLetterRange(partition: p, start: max(0, fromOffset ?? 0),
                                        end: min(high, toOffset.map { $0 + 1 } ?? high))
            return range.span > 0 ? range : nil
        }
        opened.withLock { $0 = ranges }
        return ranges
    }

    public func records() -> AsyncThrowingStream<InboundRecord, any Error> {
        let ranges = opened.withLock { $0 }
        var records: [InboundRecord] = []
        for range in ranges {
            records += transport.records(in: topic, partition: range.partition).filter {
                range.start <= $0.offset && $0.offset < range.end
            }
        }
        return AsyncThrowingStream { continuation in
            for record in records { continuation.yield(record) }
            continuation.finish()
        }
    }

    public func close() async {}
}
