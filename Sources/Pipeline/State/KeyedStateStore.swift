import Foundation
import Observability
import Synchronization

/// A ledger could not answer (its partition's state is not ready): transient, the record is retried.
public struct FulfilmentLedgerError: ClassifiedError, CustomStringConvertible {
    public var disposition: FailureDisposition { .transient }
    public var reason: ReasonCode { .ledgerUnavailable }
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// State a stage keeps per record key, with nothing on local disk: the stage's co-partitioned
/// output topic *is* the store (fulfil's purchase ledger over `entitlements.changed`, the owner
/// view over `entitlements.state`).
///
/// **Co-partitioning.** The stage writes each output to the partition number of the input record
/// it came from (``OutputPartitioning/inputPartition``) and its input is keyed by the state's key,
/// so output partition `p` holds every value of the keys of input partition `p`, and the member
/// that owns input `p` is its only writer.
///
/// **Rebuild on assignment.** As the runner's ``PartitionAssignmentHook``, the store reads output
/// partition `p` from its beginning to its high watermark when input partition `p` (or a retry
/// tier's `p`) is assigned, folding each record into the key's value with `decode`; the runner
/// admits no record of `p` until that is done. On revocation the view is dropped.
///
/// **No separate state write.** An update is tentative until the runner has the broker's
/// acknowledgement of the output that records it (``DeliveryScope``), so for a crash between any
/// two steps the rebuilt value either contains the update (the redelivered input then changes
/// nothing) or does not (it is applied and emitted again, once).
///
/// - Important: one writer per output partition needs every member of the group to run the same
///   subscription under the `range` assignor (receiptd fixes it) and tiers with as many
///   partitions as the input; workers check the counts at start-up. The state reaches back as far
///   as the output topic's retention (compaction for `entitlements.state`).
public final class KeyedStateStore<Value: Sendable>: PartitionAssignmentHook {
    /// Folds one output record into the value of its key: nil to skip the record.
    public typealias Decode = @Sendable (_ value: [UInt8], _ current: (String) -> Value?) -> (key: String, value: Value)?

    private enum Backing {
        case kafka(reader: any PartitionLogReader, topic: String, decode: Decode, logger: Logger)
        case memory
    }

    private let backing: Backing
    private let partitions: StatePartitions<Value>
    /// Per state partition, the assigned input partitions (input and tiers) that use it.
    private let holders = Mutex<[Int32: Set<TopicPartition>]>([:])

    /// A store rebuilt from a co-partitioned output topic as partitions are assigned.
    /// - Parameters:
    ///   - reader: reads the output topic (``KafkaPartitionLogReader``; tests use the in-memory one).
    ///   - topic: the output topic.
    ///   - logger: rebuilds are logged at info level.
    ///   - decode: folds one record of the topic into its key's value.
    public init(reader: any PartitionLogReader, topic: String, logger: Logger, decode: @escaping Decode) {
        backing = .kafka(reader: reader, topic: topic, decode: decode, logger: logger)
        partitions = StatePartitions()
    }

    /// A store kept in this process only (tests, demos), bounded to the `capacity` most recently
    /// added keys: a forgotten key is treated as never seen, which can only re-emit, never suppress.
    public init(inMemoryCapacity capacity: Int = 1_000_000) {
        backing = .memory
        partitions = StatePartitions(capacity: capacity)
        partitions.install(0, values: [:])
    }

    /// Reads `key`'s value and decides its next one (see ``StatePartitions``): `body` runs under a
    /// lock and returns the new value (nil: unchanged) and a result.
    /// - Throws: ``FulfilmentLedgerError`` when the record's partition is not ready (or, for a
    ///   Kafka-backed store, without a scope), what `body` throws, or `CancellationError`.
    public func update<R: Sendable>(_ key: String, scope: DeliveryScope?,
                                    _ body: (Value?) throws -> (Value?, R)) async throws -> R {
        switch backing {
        case .memory:
            return try await partitions.update(key, in: 0, scope: scope, body)
        case .kafka:
            guard let scope else { throw FulfilmentLedgerError("a Kafka-backed state store needs the record's DeliveryScope") }
            return try await partitions.update(key, in: scope.partition, scope: scope, body)
        }
    }

    public func prepare(_ assigned: [TopicPartition], epoch: AssignmentEpoch) async throws {
        guard case .kafka(let reader, let topic, let decode, let logger) = backing else { return }
        let numbers = holders.withLock { holders -> [Int32] in
            for tp in assigned { holders[tp.partition, default: []].insert(tp) }
            return Set(assigned.map(\.partition)).filter { !partitions.isInstalled($0) }.sorted()
        }
        guard !numbers.isEmpty else { return }
        let started = ContinuousClock.now
        var rebuilt = Dictionary(uniqueKeysWithValues: numbers.map { ($0, [String: Value]()) })
        var read = 0, skipped = 0
        try await reader.read(topic: topic, partitions: numbers) { record in
            read += 1
            let values = rebuilt[record.partition] ?? [:]
            guard let (key, value) = decode(record.value, { values[$0] }) else {
                skipped += 1
                return
            }
            rebuilt[record.partition]?[key] = value
        }
        try Task.checkCancellation()
        holders.withLock { holders in
            for number in numbers where holders[number]?.isEmpty == false {
                partitions.installIfAbsent(number, values: rebuilt[number]!, epoch: epoch)
            }
        }
        logger.info("state partitions rebuilt from their output topic", metadata: [
            LoggingKeys.kafkaTopic: .string(topic),
            LoggingKeys.kafkaPartition: .string(numbers.map(String.init).joined(separator: ",")),
            "state.records": .integer(read), "state.keys": .integer(rebuilt.values.reduce(0) { $0 + $1.count }),
            "state.skipped": .integer(skipped), "state.duration": .string("\(started.duration(to: .now))"),
        ])
    }

    public func release(_ revoked: [TopicPartition]) async {
        guard case .kafka = backing else { return }
        holders.withLock { holders in
            for tp in revoked {
                holders[tp.partition]?.remove(tp)
                if holders[tp.partition]?.isEmpty == true {
                    holders[tp.partition] = nil
                    partitions.remove(tp.partition)
                }
            }
        }
    }

    /// The partitions currently installed.
    public var installedPartitions: Set<Int32> { partitions.installed }

    /// Keys known in a partition (nil when it is not installed; the in-memory store uses 0).
    public func keyCount(in partition: Int32) -> Int? { partitions.count(in: partition) }

    /// The applied value of `key` in `partition` (the in-memory store uses 0).
    public func value(of key: String, in partition: Int32) -> Value? { partitions.value(key, in: partition) }
}
