import AppStore
import Foundation
import Pipeline

/// Where one purchase must end for one owner and entitlement, as the generator's script says
/// (a customer's view: "refunded", "active until June 3"), not as fulfil computes it.
struct ExpectedPurchase: Sendable {
    var originalTransactionId: String
    var userId: String
    var entitlement: String
    var productType: ProductType
    var status: PurchaseStatus
    /// When access from this purchase ends (period, grace period or revocation end; nil: never).
    /// Unused for non-renewing purchases: their end comes from stacking.
    var validUntil: Date?
    /// Non-renewing: own start and length (stacking).
    var periodStart: Date?
    var durationMonths: Int?
    /// Consumables: units bought.
    var units: Int?
    /// Apple's `signedDate` of the last input that changed the purchase (the view's `asOf`).
    var changedAt: Date?

    /// The owner view's key `bundleId/userId/entitlement`.
    var key: String { SubmissionGenerator.bundleId + "/" + userId + "/" + entitlement }
}

/// What `entitlement-state/v1` must say for one owner and entitlement.
struct ExpectedEntitlement: Equatable, CustomStringConvertible {
    var hasAccess: Bool
    /// Milliseconds since 1970 (the contract's precision).
    var validUntil: Int64?
    var units: Int?
    /// Each purchase's status, by `originalTransactionId`.
    var statuses: [String: PurchaseStatus]

    /// The same fields of an actual view value.
    init(_ state: EntitlementState) {
        hasAccess = state.hasAccess
        validUntil = state.validUntil?.milliseconds
        units = state.units
        statuses = Dictionary(state.purchases.map { ($0.originalTransactionId, $0.status) }, uniquingKeysWith: { _, last in last })
    }

    init(hasAccess: Bool, validUntil: Int64?, units: Int?, statuses: [String: PurchaseStatus]) {
        (self.hasAccess, self.validUntil, self.units, self.statuses) = (hasAccess, validUntil, units, statuses)
    }

    var description: String {
        let until = validUntil.map { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double($0) / 1000)) + "(\($0 % 1000)ms)" }
        let purchases = statuses.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.rawValue)" }.joined(separator: ",")
        return "access=\(hasAccess) until=\(until ?? "nil") units=\(units.map(String.init) ?? "nil") [\(purchases)]"
    }
}

/// The generator's own model of every owner the run touches: the expected end state of each
/// purchase per owner and entitlement, folded per key the way the contract documents the view
/// (any purchase with access gives access; access lasts until the latest end, forever if one
/// never ends; non-renewing purchases stack; units are the unrevoked consumables' sum).
struct ExpectedOwnerStates: Sendable {
    /// key → originalTransactionId → purchase.
    private var purchases: [String: [String: ExpectedPurchase]] = [:]

    /// Records (or replaces) where a purchase ends for its owner and entitlement.
    mutating func expect(_ purchase: ExpectedPurchase) {
        purchases[purchase.key, default: [:]][purchase.originalTransactionId] = purchase
    }

    var count: Int { purchases.count }

    /// The expected view, by key.
    var entitlements: [String: ExpectedEntitlement] {
        purchases.mapValues { Self.fold(Array($0.values)) }
    }

    private static func fold(_ all: [ExpectedPurchase]) -> ExpectedEntitlement {
        let asOf = all.compactMap(\.changedAt).max() ?? .distantPast
        var grants: [(until: Date?, id: String)] = []
        for purchase in all where purchase.productType != .nonRenewing && [.active, .gracePeriod].contains(purchase.status) {
            grants.append((purchase.validUntil, purchase.originalTransactionId))
        }
        // Stacking: each unrevoked non-renewing purchase starts when the one before it ends.
        var cursor: Date?
        let stacked = all.filter { $0.productType == .nonRenewing && $0.status != .revoked }
            .sorted { ($0.periodStart!, $0.originalTransactionId) < ($1.periodStart!, $1.originalTransactionId) }
        for purchase in stacked {
            let start = max(purchase.periodStart!, cursor ?? purchase.periodStart!)
            let end = CalendarMonths.adding(purchase.durationMonths!, to: start)
            if end > asOf { grants.append((end, purchase.originalTransactionId)) }
            cursor = end
        }
        let consumables = all.filter { $0.productType == .consumable }
        return ExpectedEntitlement(
            hasAccess: !grants.isEmpty,
            validUntil: grants.contains { $0.until == nil } ? nil : grants.compactMap(\.until).max()?.milliseconds,
            units: consumables.isEmpty ? nil : consumables.filter { $0.status != .revoked }.reduce(0) { $0 + ($1.units ?? 0) },
            statuses: Dictionary(uniqueKeysWithValues: all.map { ($0.originalTransactionId, $0.status) }))
    }
}
