import Foundation

/// The answer of a ``FulfilmentLedger`` claim.
public enum ClaimResult: Sendable, Equatable {
    /// Never claimed before: emit the event.
    case firstTime
    /// Already claimed: suppress (outcome `duplicate-suppressed`).
    case duplicate
    /// Signed before the ledger's de-duplication horizon, so the ledger cannot tell whether it
    /// was claimed: suppress (outcome `stale-suppressed`) rather than risk granting twice.
    case stale
}

/// Remembers which entitlement events fulfil has emitted, so redelivered or resubmitted
/// transactions do not grant twice (at-least-once delivery + idempotent fulfilment).
///
/// The seam for durability: ``InMemoryFulfilmentLedger`` today; a ledger rebuilt from a compacted
/// Kafka topic on partition assignment later. Claims are keyed by the deterministic
/// ``EntitlementChanged/eventId``; the input topic is keyed by `originalTransactionId`, so all
/// claims of one subscription happen on one partition, i.e. in one worker at a time.
///
/// - Important: a claim is made before the output is acknowledged. If the runner then fails to
///   deliver it, the record is redelivered and finds its claim taken. The in-memory ledger is
///   safe because a delivery failure stops the worker (and the ledger dies with it); a durable
///   ledger must write its claims together with the outputs (same producer flush) or release
///   them on failure.
public protocol FulfilmentLedger: Sendable {
    /// Records `eventId` as emitted if it was not already.
    /// - Parameters:
    ///   - eventId: the deterministic event id.
    ///   - signedDate: when Apple signed the underlying transaction (drives the stale horizon).
    /// - Throws: when the ledger cannot answer (treated as transient by the runner unless classified).
    func claim(eventId: String, signedDate: Date?) async throws -> ClaimResult
}
