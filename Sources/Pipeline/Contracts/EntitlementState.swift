import AppStore
import Foundation

/// `entitlement-state/v1`: whether one owner has one entitlement, folded over every purchase of
/// that owner that unlocks it, on the compacted ``Topics/entitlementState`` keyed
/// `bundleId/userId/entitlement` (``OwnerEntitlementKey``): the support desk's "what does user U
/// own now", and what `receiptd entitlements` prints.
///
/// `hasAccess` and `validUntil` are as of `asOf` (the newest change folded in); access with a
/// `validUntil` in the past has ended since. Non-renewing purchases **stack**: each starts at the
/// later of its own start and the end of the one before it (ordered by start, then id), and its
/// `validUntil` in `purchases` is the stacked end. `units` sums the quantities of consumable
/// purchases not revoked.
public struct EntitlementState: Sendable, Codable, Equatable, OutboundMessage {
    public static let schema = "entitlement-state/v1"
    public static var outputTopic: OutputTopic { .entitlementState }
    /// Co-partitioned with `entitlements.owner-updates`: output partition `p` is the view of input partition `p`.
    public static var partitioning: OutputPartitioning { .inputPartition }

    public var schema: String
    public var bundleId: String
    public var userId: String
    public var entitlement: String
    public var hasAccess: Bool
    /// When access ends (nil with access: never; nil without access: no purchase gives any).
    public var validUntil: Date?
    public var asOf: Date?
    /// Consumable units granted and not taken back (nil when no consumable unlocks it).
    public var units: Int?
    /// Every purchase of the owner for this entitlement, ordered by id.
    public var purchases: [OwnerPurchase]

    public init(key: OwnerEntitlementKey, purchases: [OwnerPurchase]) {
        schema = Self.schema
        bundleId = key.owner.bundleId
        userId = key.owner.userId
        entitlement = key.entitlement
        hasAccess = false
        self.purchases = []
        fold(purchases)
    }

    public var key: OwnerEntitlementKey {
        OwnerEntitlementKey(owner: OwnerKey(bundleId: bundleId, userId: userId), entitlement: entitlement)
    }

    public var recordKey: String { key.encoded }

    /// Folds in a purchase update; false when it changes nothing.
    ///
    /// A lower version than the known one is older news and ignored. An equal version with other
    /// content replaces it: fulfil acknowledges its owner updates before the event that makes a
    /// version durable, so after a crash an attempt that was never recorded can have left an
    /// update of the same version behind; the later one, from the attempt that counted, wins.
    public mutating func apply(_ purchase: OwnerPurchase) -> Bool {
        if let known = purchases.first(where: { $0.originalTransactionId == purchase.originalTransactionId }),
           known.version > purchase.version || known == purchase { return false }
        fold(purchases.filter { $0.originalTransactionId != purchase.originalTransactionId } + [purchase])
        return true
    }

    /// Recomputes the aggregate from the purchases (stacking included).
    private mutating func fold(_ all: [OwnerPurchase]) {
        var list = all.sorted { $0.originalTransactionId < $1.originalTransactionId }
        asOf = list.compactMap(\.changedAt).max()
        var cursor: Date?
        let stacked = list.indices.filter { list[$0].productType == .nonRenewing && list[$0].status != .revoked }
            .sorted { (list[$0].periodStart ?? .distantPast, list[$0].originalTransactionId)
                < (list[$1].periodStart ?? .distantPast, list[$1].originalTransactionId) }
        for index in stacked {
            guard let own = list[index].periodStart, let months = list[index].durationMonths else { continue }
            let start = max(own, cursor ?? own)
            let end = UTCCalendar.adding(months: months, to: start)
            list[index].validUntil = end
            // Fulfil judged the purchase by its own period; stacked, it may run on (never when a
            // policy withheld access from an active purchase).
            list[index].hasAccess = (list[index].hasAccess || list[index].status == .expired) && end > (asOf ?? start)
            cursor = end
        }
        let granting = list.filter(\.hasAccess)
        hasAccess = !granting.isEmpty
        validUntil = granting.contains { $0.validUntil == nil } ? nil : granting.compactMap(\.validUntil).max()
        let consumables = list.filter { $0.productType == .consumable }
        units = consumables.isEmpty ? nil : consumables.filter { $0.status != .revoked }.reduce(0) { $0 + ($1.quantity ?? 0) }
        purchases = list
    }

    private enum CodingKeys: String, CodingKey {
        case schema, bundleId, userId, entitlement, hasAccess, validUntil, asOf, units, purchases
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "expected \(Self.schema)")
        }
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        entitlement = try c.decode(String.self, forKey: .entitlement)
        hasAccess = try c.decode(Bool.self, forKey: .hasAccess)
        validUntil = try c.decodeTimestampIfPresent(forKey: .validUntil)
        asOf = try c.decodeTimestampIfPresent(forKey: .asOf)
        units = try c.decodeIfPresent(Int.self, forKey: .units)
        purchases = try c.decode([OwnerPurchase].self, forKey: .purchases)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(entitlement, forKey: .entitlement)
        try c.encode(hasAccess, forKey: .hasAccess)
        try c.encodeTimestamp(validUntil, forKey: .validUntil)
        try c.encodeTimestamp(asOf, forKey: .asOf)
        try c.encode(units, forKey: .units)
        try c.encode(purchases, forKey: .purchases)
    }
}
