import Foundation

/// The delay gate of the retry tiers as pure state (part of ``RunnerState``): which records of
/// which partitions are held back, and until when.
///
/// A record read from a retry tier carries its due time (`receiptd-not-before`). If it is not due
/// yet, it is *held*: not admitted (so its offset cannot be stored), and its partition is paused
/// by the runner until the due time. Every later record of that partition that still arrives
/// (a source may have fetched ahead before the pause took effect) queues behind it, so offset
/// order is kept. Fixed delays per tier make due times non-decreasing within a tier partition,
/// so waiting for the head is enough; a later head with an earlier due time (a `Retry-After`
/// pushed the one before it) is simply released together with it.
///
/// Nothing here sleeps or looks at a clock: callers pass "now", and a timer task of the runner
/// calls ``release(now:)`` at ``nextDue``.
struct DelayGate {
    private struct Held {
        let record: InboundRecord
        let due: Date?
    }

    /// Held records per partition, head first; an entry exists only while it is non-empty.
    private var held: [TopicPartition: [Held]] = [:]

    /// Bumped whenever the held set changes (the timer re-arms on it).
    private(set) var version = 0

    /// Partitions with held records: the runner keeps them paused.
    var partitions: Set<TopicPartition> { Set(held.keys) }

    /// Whether it holds records of `tp` (without building ``partitions``: asked for every record).
    func isHolding(_ tp: TopicPartition) -> Bool { !held.isEmpty && held[tp] != nil }

    /// Records held, across partitions.
    var count: Int { held.values.reduce(0) { $0 + $1.count } }

    /// The earliest due time of a held head, if anything is held.
    var nextDue: Date? { held.values.compactMap { $0.first?.due }.min() }

    /// Offers a record read from the source.
    /// - Parameters:
    ///   - due: its `notBefore` (nil: no delay).
    ///   - now: the current instant.
    /// - Returns: true if the record may be admitted now; false if it is held (the caller pauses
    ///   its partition when it is the partition's first held record: see ``partitions``).
    mutating func offer(_ record: InboundRecord, due: Date?, now: Date) -> Bool {
        let tp = record.topicPartition
        if isHolding(tp) {
            held[tp]!.append(Held(record: record, due: due))
            version += 1
            return false
        }
        guard let due, due > now else { return true }
        held[tp] = [Held(record: record, due: due)]
        version += 1
        return false
    }

    /// Takes every record that is due: per partition, heads whose due time has passed (and the
    /// records behind them that are due too), in offset order.
    /// - Returns: the records to admit now.
    mutating func release(now: Date) -> [InboundRecord] {
        var released: [InboundRecord] = []
        for tp in held.keys.sorted() {
            var queue = held[tp]!
            var taken = 0
            while taken < queue.count, (queue[taken].due ?? .distantPast) <= now { taken += 1 }
            guard taken > 0 else { continue }
            released.append(contentsOf: queue[..<taken].map(\.record))
            queue.removeFirst(taken)
            held[tp] = queue.isEmpty ? nil : queue
        }
        if !released.isEmpty { version += 1 }
        return released
    }

    /// Forgets the held records of `partitions` (revoked: their offsets were never stored, so the
    /// partitions' next owner receives them again).
    /// - Returns: how many records were dropped.
    @discardableResult
    mutating func drop(_ partitions: Set<TopicPartition>) -> Int {
        var dropped = 0
        for tp in partitions {
            if let queue = held.removeValue(forKey: tp) { dropped += queue.count }
        }
        if dropped > 0 { version += 1 }
        return dropped
    }

    /// Forgets every held record (shutdown: they are redelivered after a restart).
    /// - Returns: how many records were dropped.
    @discardableResult
    mutating func dropAll() -> Int {
        drop(Set(held.keys))
    }
}
