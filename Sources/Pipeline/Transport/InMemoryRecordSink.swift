import Foundation
import Synchronization

/// The producer side of ``InMemoryTransport``. A send writes its records into the cluster and
/// returns when "acknowledged": at once, or when the test releases held acknowledgements.
/// Injected failures make the whole batch fail before anything is written. An explicit
/// ``OutboundRecord/partition`` is honoured; one the topic does not have fails the whole batch
/// (``UnknownPartitionError``), as a Kafka delivery report would.
public struct InMemoryRecordSink: RecordSink {
    let transport: InMemoryTransport

    /// A record named a partition its topic does not have.
    public struct UnknownPartitionError: Error, CustomStringConvertible {
        /// Which record.
        public var description: String
    }

    public func send(_ records: [OutboundRecord]) async throws {
        let injected = transport.state.withLock { $0.sendFailure }?(records)
        if let injected { throw injected }
        let now = transport.clock()
        let written = transport.mutate { state -> Result<Int?, UnknownPartitionError> in
            // Each topic's partition count, looked up once for the run of records that share it.
            var counted: (topic: String, count: Int32)?
            func partitionCount(_ topic: String) -> Int32 {
                if let counted, counted.topic == topic { return counted.count }
                let count = state.partitionCounts[topic] ?? state.defaultPartitionCount
                counted = (topic, count)
                return count
            }
            for record in records {
                if let partition = record.partition, !(0..<partitionCount(record.topic)).contains(partition) {
                    return .failure(UnknownPartitionError(description: "\(record.topic) has no partition \(partition)"))
                }
            }
            for record in records {
                _ = InMemoryTransport.append(&state, topic: record.topic, partitionCount: partitionCount(record.topic),
                                             key: record.key, value: record.value, headers: record.headers,
                                             partition: record.partition, timestamp: now)
            }
            state.sendCount += 1
            guard state.holdingAcknowledgements else { return .success(nil) }
            state.nextWaiterId += 1
            return .success(state.nextWaiterId)
        }
        guard let id = try written.get() else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = transport.mutate { state -> Bool? in
                    if Task.isCancelled { return false }
                    guard state.holdingAcknowledgements else { return true }
                    state.heldSends[id] = continuation
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            transport.mutate { $0.heldSends.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}
