import AppStore
import Foundation
import Testing
@testable import Pipeline

/// One row of the lifecycle table: signed inputs in Apple's shapes, the exact events they must
/// produce in order, and every owner's final entitlement state.
struct LifecycleScenario: Sendable, CustomTestStringConvertible {
    /// An expected `entitlement-changed/v2`.
    struct Event: Equatable, CustomStringConvertible {
        var change: EntitlementChangeKind
        var user: String
        var entitlement: String
        var status: PurchaseStatus
        var hasAccess: Bool
        var validUntil: Date?
        var quantity: Int? = nil

        var description: String {
            "\(change.rawValue) \(user)/\(entitlement) \(status.rawValue) access=\(hasAccess) until=\(validUntil.map(ContractCoding.timestamp) ?? "-")"
                + (quantity.map { " qty=\($0)" } ?? "")
        }
    }

    /// An expected final `entitlement-state/v1` (an owner the view has nothing for counts as no access).
    struct Owner: Equatable, CustomStringConvertible {
        var user: String
        var entitlement: String
        var hasAccess: Bool
        var validUntil: Date?
        var units: Int? = nil

        var description: String {
            "\(user)/\(entitlement) access=\(hasAccess) until=\(validUntil.map(ContractCoding.timestamp) ?? "-")"
                + (units.map { " units=\($0)" } ?? "")
        }
    }

    var name: String
    var policy = FulfilmentPolicy()
    var inputs: @Sendable () -> [LifecycleHarness.Input]
    var events: [Event]
    var owners: [Owner]
    /// Exact verdicts per input label, in order (only the labels listed are checked).
    var verdicts: [String: [String]] = [:]
    /// Whether any order of the inputs must reach the same final state. Ownership claims are
    /// order-dependent by definition (the first claimant owns; a transfer follows the last).
    var reorderable = true

    var testDescription: String { name }

    static func event(_ change: EntitlementChangeKind, _ user: String, _ entitlement: String, _ status: PurchaseStatus,
                      access: Bool, until: Date?, quantity: Int? = nil) -> Event {
        Event(change: change, user: user, entitlement: entitlement, status: status, hasAccess: access, validUntil: until,
              quantity: quantity)
    }

    static func owner(_ user: String, _ entitlement: String, access: Bool, until: Date?, units: Int? = nil) -> Owner {
        Owner(user: user, entitlement: entitlement, hasAccess: access, validUntil: until, units: units)
    }

    /// The events of a run, in the expectation's vocabulary.
    static func observed(_ run: LifecycleHarness.Run) -> [Event] {
        run.events.map { event in
            Event(change: event.change, user: event.userId, entitlement: event.entitlement, status: event.status,
                  hasAccess: event.hasAccess, validUntil: event.validUntil, quantity: event.quantity)
        }
    }

    /// The final state of each expected owner in a run.
    func finalOwners(_ run: LifecycleHarness.Run) -> [Owner] {
        owners.map { expected in
            let key = OwnerEntitlementKey(owner: OwnerKey(bundleId: LifecycleHarness.bundleId, userId: expected.user),
                                          entitlement: expected.entitlement).encoded
            guard let state = run.owners[key] else {
                return Owner(user: expected.user, entitlement: expected.entitlement, hasAccess: false, validUntil: nil,
                             units: expected.units == 0 ? 0 : nil)
            }
            return Owner(user: expected.user, entitlement: expected.entitlement, hasAccess: state.hasAccess,
                         validUntil: state.hasAccess ? state.validUntil : nil, units: state.units)
        }
    }
}

/// Deterministic permutations for the re-ordered runs.
struct SeededShuffle {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func shuffled<T>(_ items: [T]) -> [T] {
        var items = items
        for i in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(i, Int(next() % UInt64(i + 1)))
        }
        return items
    }
}
