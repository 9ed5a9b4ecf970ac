import Foundation
import Synchronization

/// A bounded, thread-safe ``FulfilmentLedger`` kept in memory: it suppresses re-submissions of
/// a transaction while the worker runs.
///
/// It remembers the most recent `capacity` event ids (first in, first out). An event id it has
/// forgotten (or never saw, e.g. after a restart) is claimed again as ``ClaimResult/firstTime``:
/// the output is then a re-emission carrying the *same* deterministic event id, which a consumer
/// can de-duplicate. It deliberately never answers ``ClaimResult/stale`` for what it merely
/// forgot, because suppressing an event it cannot prove was emitted could lose a purchase, which
/// is worse than a re-emission. Crash-proof de-duplication lives in a Kafka-backed ledger.
public final class InMemoryFulfilmentLedger: FulfilmentLedger {
    private struct State {
        var known: Set<String> = []
        var order: [String] = []
        var head = 0
    }

    /// How many event ids are remembered.
    public let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty ledger.
    /// - Parameter capacity: how many event ids to remember (at least 1; default 1,000,000,
    ///   about 100 MB at most).
    public init(capacity: Int = 1_000_000) {
        self.capacity = max(1, capacity)
    }

    public func claim(eventId: String, signedDate: Date?) async throws -> ClaimResult {
        let capacity = capacity
        return state.withLock { state in
            guard state.known.insert(eventId).inserted else { return .duplicate }
            state.order.append(eventId)
            if state.order.count - state.head > capacity {
                state.known.remove(state.order[state.head])
                state.head += 1
                if state.head > 1024 && state.head * 2 > state.order.count {
                    state.order.removeFirst(state.head)
                    state.head = 0
                }
            }
            return .firstTime
        }
    }

    /// Number of event ids currently remembered.
    public var count: Int { state.withLock { $0.known.count } }
}
