import Foundation
import Observability
import Synchronization

/// The production ``FulfilmentLedger``: nothing is kept on local disk, because the output topic
/// *is* the ledger.
///
/// **Co-partitioning.** Fulfil writes each `entitlement-changed/v1` to the partition number of the
/// `receipts.verified` record it came from (``OutputPartitioning/inputPartition``), and
/// `receipts.verified` is keyed by `originalTransactionId`. So output partition `p` holds exactly
/// the events emitted for input partition `p` (and its retry tiers' partition `p`, which mirror
/// it), every event of a purchase is in one partition, and the worker that owns input `p` is the
/// only writer of output `p`.
///
/// **Rebuild on assignment.** As the runner's ``PartitionAssignmentHook``, the ledger reads output
/// partition `p` from its beginning to its high watermark when input partition `p` is assigned
/// (a separate consumer, explicit assignment, no group) and rebuilds the event ids emitted and,
/// per purchase, the newest applied `signedDate` and furthest `validUntil`. The runner admits no
/// record of `p` until that is done. On revocation the partition's view is dropped; a later
/// assignment rebuilds it from Kafka again, never from memory.
///
/// **No separate state write.** A claim is tentative until the runner has the broker's
/// acknowledgement of the output (``DeliveryScope``); the acknowledged output is the durable
/// record of the claim. Hence, for a crash between any two steps:
/// - before the output is acknowledged: nothing durable; the record is redelivered and emitted
///   (once: the rebuilt view does not contain it);
/// - after the acknowledgement, before the input offset is stored or committed: the rebuilt view
///   contains the event id; the redelivered record ends as `duplicate-suppressed`;
/// - the producer retried a send internally: the idempotent producer (`enable.idempotence`,
///   `acks=all`) writes it once.
///
/// - Important: it relies on one writer per output partition: every member of the fulfil group
///   runs the same subscription (input plus the same retry tiers) under Kafka's `range` assignor
///   (receiptd fixes it), and the tiers have as many partitions as the input, so input `p` and
///   tier `p` always belong to the same member. Workers check the partition counts at start-up.
///   De-duplication reaches back as far as the output topic's retention.
public final class KafkaFulfilmentLedger: FulfilmentLedger, PartitionAssignmentHook {
    private let reader: any PartitionLogReader
    private let topic: String
    private let logger: Logger
    private let partitions = LedgerPartitions()
    /// Per ledger partition, the assigned input partitions (input and tiers) that use it.
    private let holders = Mutex<[Int32: Set<TopicPartition>]>([:])

    /// Creates a ledger with nothing installed; partitions are rebuilt as they are assigned.
    /// - Parameters:
    ///   - reader: reads the output topic (``KafkaPartitionLogReader``; tests use the in-memory one).
    ///   - topic: the output topic, `entitlements.changed` (``Topics/entitlementsChanged``).
    ///   - logger: rebuilds are logged at info level.
    public init(reader: any PartitionLogReader, topic: String, logger: Logger) {
        self.reader = reader
        self.topic = topic
        self.logger = logger
    }

    /// Rebuilds the view of the ledger partitions the assigned input partitions use, unless already
    /// installed (input `p` and its tiers' `p` share ledger partition `p`).
    public func prepare(_ assigned: [TopicPartition]) async throws {
        let numbers = holders.withLock { holders -> [Int32] in
            for tp in assigned { holders[tp.partition, default: []].insert(tp) }
            return Set(assigned.map(\.partition)).filter { !partitions.isInstalled($0) }.sorted()
        }
        guard !numbers.isEmpty else { return }
        let started = ContinuousClock.now
        var books = Dictionary(uniqueKeysWithValues: numbers.map { ($0, LedgerBook()) })
        var read = 0, undecodable = 0
        try await reader.read(topic: topic, partitions: numbers) { record in
            read += 1
            guard let event = try? ContractCoding.decode(LedgerEvent.self, from: record.value) else {
                undecodable += 1
                return
            }
            books[record.partition]?.apply(event)
        }
        try Task.checkCancellation()
        holders.withLock { holders in
            for number in numbers where holders[number]?.isEmpty == false {
                partitions.installIfAbsent(number, book: books[number]!)
            }
        }
        logger.info("ledger partitions rebuilt from the output topic", metadata: [
            LoggingKeys.kafkaTopic: .string(topic),
            LoggingKeys.kafkaPartition: .string(numbers.map(String.init).joined(separator: ",")),
            "ledger.records": .integer(read), "ledger.events": .integer(books.values.reduce(0) { $0 + $1.count }),
            "ledger.undecodable": .integer(undecodable),
            "ledger.duration": .string("\(started.duration(to: .now))"),
        ])
    }

    /// Drops the view of ledger partitions no assigned input partition uses any more.
    public func release(_ revoked: [TopicPartition]) async {
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

    /// Claims `event` in the ledger partition of the record being processed.
    /// - Throws: ``FulfilmentLedgerError`` without a scope (the partition is unknown) or when the
    ///   partition is not installed.
    public func claim(_ event: LedgerEvent, scope: DeliveryScope?) async throws -> ClaimResult {
        guard let scope else {
            throw FulfilmentLedgerError("a KafkaFulfilmentLedger claim needs the record's DeliveryScope")
        }
        return try await partitions.claim(event, in: scope.partition, scope: scope)
    }

    /// The ledger partitions currently installed.
    public var installedPartitions: Set<Int32> { partitions.installed }

    /// Events known in a ledger partition (nil when it is not installed).
    public func eventCount(in partition: Int32) -> Int? { partitions.count(in: partition) }
}
