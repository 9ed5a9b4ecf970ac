import Foundation

/// A bounded ``FulfilmentLedger`` kept in memory, for tests and demos: it suppresses duplicates
/// and stale updates while the worker runs, across all partitions.
///
/// It remembers the most recent `capacity` event ids and purchase histories (first in, first
/// out). An event it has forgotten (or never saw, e.g. after a restart) is claimed again as
/// ``ClaimResult/firstTime``: the output is then a re-emission carrying the *same* deterministic
/// event id, which a consumer can de-duplicate. Forgetting never makes it suppress anything, since
/// suppressing an event it cannot prove was emitted could lose a purchase. Claims are tentative
/// under a ``DeliveryScope``, as the protocol describes. Crash-proof de-duplication is
/// ``KafkaFulfilmentLedger``'s.
public final class InMemoryFulfilmentLedger: FulfilmentLedger {
    /// How many event ids (and purchase histories) are remembered.
    public let capacity: Int
    private let partitions = LedgerPartitions()

    /// Creates an empty ledger.
    /// - Parameter capacity: how many event ids to remember (at least 1; default 1,000,000,
    ///   about 100 MB at most).
    public init(capacity: Int = 1_000_000) {
        self.capacity = max(1, capacity)
        partitions.install(0, book: LedgerBook(capacity: self.capacity))
    }

    public func claim(_ event: LedgerEvent, scope: DeliveryScope?) async throws -> ClaimResult {
        try await partitions.claim(event, in: 0, scope: scope)
    }

    /// Number of event ids currently remembered.
    public var count: Int { partitions.count(in: 0) ?? 0 }
}
