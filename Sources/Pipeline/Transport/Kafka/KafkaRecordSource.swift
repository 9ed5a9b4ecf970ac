import Dispatch
import Foundation
import Kafka
import Observability
import Synchronization

/// The ``RecordSource`` of a stage worker: a Kafka consumer-group member.
///
/// It turns the consumer's messages and its two synchronous rebalance hooks into the runner's
/// single ordered ``SourceEvent`` stream, in which a partition's records always come after its
/// ``SourceEvent/assigned(_:)`` and before its ``SourceEvent/revoked(_:)``:
/// - On assignment librdkafka's poll thread calls the assign hook before it hands out any message
///   of the new partitions; the source marks them owned and yields ``SourceEvent/assigned(_:)``
///   right there, so the runner learns of the assignment before its first record.
/// - On revocation the poll thread calls the revoke hook; the source marks the partitions not
///   owned, yields ``SourceEvent/revoked(_:)`` and blocks that thread until the runner
///   acknowledges (bounded by `revocationTimeout`), so in-flight work of those partitions is
///   finished and its offsets are stored *before* the consumer commits and hands them over.
/// - A message is handed to the runner only while its partition is owned. One taken from the
///   consumer just before a revocation of its partition, but not yet handed on, is dropped: its
///   offset was never stored, so the partition's next owner (possibly this worker again, from the
///   committed offset) receives it again; admitted, it could enter the partition's next
///   generation out of order. (Deciding by ownership rather than by "was there a revocation while
///   waiting for the message" matters: a worker idle across a rebalance must not drop the first
///   fresh message of a partition it got back, which would let the offset store skip it.)
public final class KafkaRecordSource: RecordSource {
    private struct State {
        var continuation: AsyncStream<SourceEvent>.Continuation?
        /// Partitions assigned and not revoked (kept before the runner iterates, too).
        var owned: Set<TopicPartition> = []
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let consumer: KafkaConsumer
    private let shared: Shared
    private let logger: Logger

    /// Creates the consumer.
    /// - Parameters:
    ///   - configuration: the consumer configuration; its `onPartitionsAssigned` and
    ///     `onPartitionsRevoked` hooks are set here.
    ///   - revocationTimeout: the longest the poll thread waits for the runner to settle revoked
    ///     partitions (give it the runner's own revocation timeout plus a margin).
    ///   - logger: for adapter-level events.
    /// - Throws: ``KafkaError`` for invalid configuration.
    public init(configuration: KafkaConsumerConfiguration, revocationTimeout: Duration, logger: Logger) throws {
        let shared = Shared()
        var configuration = configuration
        let waitMilliseconds = Int(revocationTimeout.components.seconds * 1000
                                   + revocationTimeout.components.attoseconds / 1_000_000_000_000_000)
        configuration.onPartitionsAssigned = { partitions in
            shared.state.withLock { state in
                let mapped = partitions.map { TopicPartition(topic: $0.topic, partition: $0.partition) }
                state.owned.formUnion(mapped)
                state.continuation?.yield(.assigned(mapped))
            }
        }
        configuration.onPartitionsRevoked = { partitions in
            let acknowledged = DispatchSemaphore(value: 0)
            let yielded: Bool = shared.state.withLock { state in
                let mapped = partitions.map { TopicPartition(topic: $0.topic, partition: $0.partition) }
                state.owned.subtract(mapped)
                guard let continuation = state.continuation else { return false }
                continuation.yield(.revoked(PartitionRevocation(partitions: mapped, onAcknowledge: { acknowledged.signal() })))
                return true
            }
            if yielded, acknowledged.wait(timeout: .now() + .milliseconds(waitMilliseconds)) == .timedOut {
                logger.warning("revocation not acknowledged in time; releasing partitions", metadata: [
                    LoggingKeys.kafkaPartition: .string(partitions.map(\.description).joined(separator: ",")),
                ])
            }
        }
        self.consumer = try KafkaConsumer(configuration: configuration)
        self.shared = shared
        self.logger = logger
    }

    /// The underlying consumer (watermarks, committed offsets, close).
    public var kafkaConsumer: KafkaConsumer { consumer }

    public func events() -> AsyncStream<SourceEvent> {
        let (stream, continuation) = AsyncStream<SourceEvent>.makeStream()
        shared.state.withLock { state in
            state.continuation = continuation
            // Assigned before the runner started iterating: say so first.
            if !state.owned.isEmpty { continuation.yield(.assigned(state.owned.sorted())) }
        }
        let consumer = self.consumer
        let shared = self.shared
        let logger = self.logger
        let assignments = Task {
            for await event in consumer.events {
                switch event {
                case .partitionsAssigned, .partitionsRevoked:
                    break  // handled synchronously by the rebalance hooks, in order with the messages
                case .error(let error):
                    logger.log(level: error.isFatal ? .error : .debug, "kafka consumer error",
                               metadata: [LoggingKeys.errorMessage: .string("\(error)")])
                }
            }
        }
        let records = Task {
            do {
                var iterator = consumer.messages.makeAsyncIterator()
                while true {
                    guard let message = try await iterator.next() else { break }
                    let record = InboundRecord(message)
                    shared.state.withLock { state in
                        guard state.owned.contains(record.topicPartition) else { return }  // revoked since taken
                        state.continuation?.yield(.record(record))
                    }
                }
            } catch {
                logger.error("kafka consumer stopped", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
            }
            shared.state.withLock { $0.continuation = nil }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            records.cancel()
            assignments.cancel()
        }
        return stream
    }

    public func storeOffset(of position: RecordPosition) async throws {
        try consumer.storeOffset(KafkaConsumerMessage(
            topic: position.topicPartition.topic, partition: position.topicPartition.partition,
            offset: position.offset, key: nil, value: [], headers: [], timestamp: nil))
    }

    public func pause(_ partitions: [TopicPartition]) async throws {
        try consumer.pause(assignedOnly(partitions))
    }

    public func resume(_ partitions: [TopicPartition]) async throws {
        try consumer.resume(assignedOnly(partitions))
    }

    /// Commits stored offsets and leaves the group.
    public func close() async {
        shared.state.withLock { $0.continuation = nil }
        await consumer.close()
    }

    /// Pausing or resuming a partition revoked a moment ago is meaningless, not an error.
    private func assignedOnly(_ partitions: [TopicPartition]) -> [KafkaTopicPartition] {
        let assigned = Set(consumer.assignment)
        return partitions.map { KafkaTopicPartition(topic: $0.topic, partition: $0.partition) }.filter(assigned.contains)
    }
}

extension InboundRecord {
    /// The runner's view of a consumed Kafka message.
    init(_ message: KafkaConsumerMessage) {
        self.init(topic: message.topic, partition: message.partition, offset: message.offset, key: message.key,
                  value: message.value, headers: message.headers.map { RecordHeader(key: $0.key, value: $0.value) },
                  timestamp: message.timestamp ?? Date())
    }
}
