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
        var channel: SourceEventChannel?
        /// Partitions assigned and not revoked (kept before the runner iterates, too).
        var owned: Set<TopicPartition> = []
        /// The earliest assignment among the owned partitions, announced for them all when the
        /// runner starts iterating after they were assigned (so no state is built for a later
        /// assignment than one of their records').
        var epoch = AssignmentEpoch.initial
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let consumer: KafkaConsumer
    private let shared: Shared
    private let logger: Logger
    private let bufferedRecords: Int

    /// Creates the consumer.
    /// - Parameters:
    ///   - configuration: the consumer configuration; its `onPartitionsAssigned` and
    ///     `onPartitionsRevoked` hooks are set here.
    ///   - revocationTimeout: the longest the poll thread waits for the runner to settle revoked
    ///     partitions (give it the runner's own revocation timeout plus a margin).
    ///   - bufferedRecords: records that may wait between the consumer and the runner (see
    ///     ``SourceEventChannel``); beyond them the consumer's own buffer fills and pauses fetching.
    ///   - logger: for adapter-level events.
    /// - Throws: ``KafkaError`` for invalid configuration.
    public init(configuration: KafkaConsumerConfiguration, revocationTimeout: Duration, bufferedRecords: Int = 64,
                logger: Logger) throws {
        let shared = Shared()
        var configuration = configuration
        let waitMilliseconds = Int(revocationTimeout.components.seconds * 1000
                                   + revocationTimeout.components.attoseconds / 1_000_000_000_000_000)
        // Lock order: the channel's lock may take `shared.state` (the ownership check in `send`),
        // so the hooks never call into the channel while holding `shared.state`.
        configuration.onPartitionsAssigned = { partitions, generation in
            let mapped = partitions.map { TopicPartition(topic: $0.topic, partition: $0.partition) }
            let epoch = AssignmentEpoch(generation)
            let channel = shared.state.withLock { state in
                state.epoch = state.owned.isEmpty ? epoch : min(state.epoch, epoch)
                state.owned.formUnion(mapped)
                return state.channel
            }
            channel?.yieldControl(.assigned(mapped, epoch: epoch))
        }
        configuration.onPartitionsRevoked = { partitions, lost in
            let acknowledged = DispatchSemaphore(value: 0)
            let mapped = partitions.map { TopicPartition(topic: $0.topic, partition: $0.partition) }
            // Ownership ends first: a record of these partitions not yet enqueued is refused from
            // here on, and one already enqueued precedes the revocation in the channel's order.
            let channel = shared.state.withLock { state in
                state.owned.subtract(mapped)
                return state.channel
            }
            // A record of these partitions waiting for room in the channel was fetched under this
            // assignment: refuse it now, before the partitions can be assigned again.
            let revoked = Set(mapped)
            channel?.refuseWaiting { revoked.contains($0.topicPartition) }
            channel?.yieldControl(.revoked(PartitionRevocation(partitions: mapped, lost: lost, onAcknowledge: { acknowledged.signal() })))
            if channel != nil, acknowledged.wait(timeout: .now() + .milliseconds(waitMilliseconds)) == .timedOut {
                logger.warning("revocation not acknowledged in time; releasing partitions", metadata: [
                    LoggingKeys.kafkaPartition: .string(partitions.map(\.description).joined(separator: ",")),
                ])
            }
        }
        self.consumer = try KafkaConsumer(configuration: configuration)
        self.shared = shared
        self.logger = logger
        self.bufferedRecords = bufferedRecords
    }

    /// The underlying consumer (watermarks, committed offsets, close).
    public var kafkaConsumer: KafkaConsumer { consumer }

    public func events() -> SourceEventChannel {
        let channel = SourceEventChannel(capacity: bufferedRecords)
        let (owned, epoch) = shared.state.withLock { state in
            state.channel = channel
            return (state.owned, state.epoch)
        }
        // Assigned before the runner started iterating: say so first.
        if !owned.isEmpty { channel.yieldControl(.assigned(owned.sorted(), epoch: epoch)) }
        let consumer = self.consumer
        let shared = self.shared
        let logger = self.logger
        let assignments = Task {
            for await event in consumer.events {
                switch event {
                case .partitionsAssigned, .partitionsRevoked:
                    break  // handled synchronously by the rebalance hooks, in order with the messages
                case .error(let error):
                    // A repaired skip is rare and worth seeing; librdkafka's transient errors are not.
                    let level: Logger.Level = error.isFatal ? .error : error.code == .skippedOffsets ? .warning : .debug
                    logger.log(level: level, "kafka consumer error",
                               metadata: [LoggingKeys.errorMessage: .string("\(error)")])
                }
            }
        }
        let records = Task {
            do {
                var iterator = consumer.messages.makeAsyncIterator()
                let batchLimit = bufferedRecords
                while true {
                    // The rest of a poll's messages are buffered by the time the first is handed
                    // over: they go on together.
                    guard let first = try await iterator.next() else { break }
                    var records = [InboundRecord(first)]
                    for message in iterator.nextBuffered(max: batchLimit - 1) { records.append(InboundRecord(message)) }
                    // Waits while the channel is full: the consumer's buffer then fills and pauses
                    // fetching. A record whose partition was revoked meanwhile is dropped, also
                    // when the partition has been assigned again since (its epoch is not the
                    // current one): the new assignment re-fetches it from the committed offset,
                    // in order.
                    await channel.send(contentsOf: records, admitting: { candidates in
                        let owned = shared.state.withLock { $0.owned }
                        let generations = consumer.assignmentGenerations
                        var last: (TopicPartition, AssignmentEpoch, Bool)?
                        return candidates.filter { record in
                            let tp = record.topicPartition
                            if let last, last.0 == tp, last.1 == record.epoch { return last.2 }
                            let current = owned.contains(tp)
                                && generations[KafkaTopicPartition(topic: tp.topic, partition: tp.partition)] == record.epoch.rawValue
                            last = (tp, record.epoch, current)
                            return current
                        }
                    })
                    if Task.isCancelled { break }
                }
            } catch {
                logger.error("kafka consumer stopped", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
            }
            shared.state.withLock { state in
                if state.channel === channel { state.channel = nil }
            }
            channel.finish()
        }
        channel.onTermination {
            records.cancel()
            assignments.cancel()
        }
        return channel
    }

    public func storeOffsets(_ positions: [RecordPosition]) async -> [TopicPartition: any Error] {
        let errors = consumer.storeOffsets(of: positions.map {
            KafkaTopicPartitionOffset(topic: $0.topicPartition.topic, partition: $0.topicPartition.partition, offset: $0.offset)
        })
        var failures: [TopicPartition: any Error] = [:]
        for (position, error) in zip(positions, errors) {
            if let error { failures[position.topicPartition] = error }
        }
        return failures
    }

    public func pause(_ partitions: [TopicPartition]) async throws {
        try consumer.pause(assignedOnly(partitions))
    }

    public func resume(_ partitions: [TopicPartition]) async throws {
        try consumer.resume(assignedOnly(partitions))
    }

    /// Commits stored offsets and leaves the group.
    public func close() async {
        let channel = shared.state.withLock { state in
            defer { state.channel = nil }
            return state.channel
        }
        channel?.finish()
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
                  timestamp: message.timestamp ?? Date(), epoch: AssignmentEpoch(message.assignmentGeneration))
    }
}
