import Foundation

/// The answer of a ``FulfilmentLedger`` claim.
public enum ClaimResult: Sendable, Equatable {
    /// Not emitted before: emit the event.
    case firstTime
    /// This exact event (same transaction, same action) was already emitted: suppress
    /// (outcome `duplicate-suppressed`).
    case duplicate
    /// An older update of a purchase whose newer state was already applied, which would move the
    /// entitlement backwards: suppress (outcome `stale-suppressed`; the rule is
    /// ``EntitlementRules/isStale(_:after:revoked:)``).
    case stale
}

/// A ledger could not answer a claim.
public struct FulfilmentLedgerError: ClassifiedError, CustomStringConvertible {
    /// Transient: the record is retried (the partition's state may be ready by then).
    public var disposition: FailureDisposition { .transient }
    public var reason: ReasonCode { .ledgerUnavailable }
    /// What went wrong.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// Remembers which entitlement events fulfil has emitted, so that a redelivered, resubmitted or
/// replayed transaction does not grant twice and an older update does not undo a newer one
/// (at-least-once delivery + idempotent fulfilment = effectively once).
///
/// Implementations: ``KafkaFulfilmentLedger`` (production: nothing is kept locally; each partition's
/// view is rebuilt from the output partition that mirrors it, so it survives crashes and moves
/// with the partition) and ``InMemoryFulfilmentLedger`` (tests, demos).
///
/// **Claims are tentative.** A claim answered ``ClaimResult/firstTime`` under a
/// ``DeliveryScope`` counts as emitted only when the scope settles delivered, i.e. once the
/// runner has the broker's acknowledgement of the output that *is* the durable record of the
/// emission. Settled not delivered (timeout, retry, delivery failure, shutdown), the claim is
/// withdrawn, so the record's next attempt emits. While a claim is pending, a concurrent claim of
/// the same event waits for it to settle. Without a scope (a stage called directly, in tests) a
/// claim takes effect at once.
public protocol FulfilmentLedger: Sendable {
    /// Claims the emission of `event`.
    /// - Parameters:
    ///   - event: the event fulfil is about to emit.
    ///   - scope: the delivery of the record being processed (``StageContext/delivery``).
    /// - Returns: whether to emit it, or why not.
    /// - Throws: ``FulfilmentLedgerError`` when the ledger cannot answer (transient), or
    ///   `CancellationError` while waiting for a pending claim.
    func claim(_ event: LedgerEvent, scope: DeliveryScope?) async throws -> ClaimResult
}
