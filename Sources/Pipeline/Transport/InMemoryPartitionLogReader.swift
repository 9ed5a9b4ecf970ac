/// The ``PartitionLogReader`` of an ``InMemoryTransport``: a snapshot of each partition as it is
/// when reading starts.
public struct InMemoryPartitionLogReader: PartitionLogReader {
    let transport: InMemoryTransport

    /// A partition the topic does not have.
    public struct UnknownPartitionError: Error, CustomStringConvertible {
        /// Which partition.
        public var description: String
    }

    public func read(topic: String, partitions: [Int32], _ body: (InboundRecord) throws -> Void) async throws {
        let count = transport.partitionCount(of: topic)
        for partition in partitions {
            guard (0..<count).contains(partition) else {
                throw UnknownPartitionError(description: "\(topic) has no partition \(partition)")
            }
            for record in transport.records(in: topic, partition: partition) {
                try Task.checkCancellation()
                try body(record)
            }
        }
    }
}

extension InMemoryTransport {
    /// Reads whole partitions of this cluster's topics (what a ``KeyedStateStore`` rebuilds from).
    public var logReader: InMemoryPartitionLogReader { InMemoryPartitionLogReader(transport: self) }
}
