import AppStore
import Foundation

/// `owner-purchase/v1`: what one purchase now means for one owner's entitlement, from fulfil to
/// the owner view on ``Topics/ownerUpdates``, keyed `bundleId/userId/entitlement`
/// (``OwnerEntitlementKey``), so every purchase of an owner's entitlement meets in one partition.
///
/// `version` is the purchase's ``PurchaseState/version``: the owner view keeps, per purchase, the
/// update with the highest one, so redelivered and reordered updates fold to the same state.
public struct OwnerPurchaseUpdate: Sendable, Codable, Equatable, OutboundMessage {
    public static let schema = "owner-purchase/v1"
    public static var outputTopic: OutputTopic { .ownerUpdates }

    public var schema: String
    public var bundleId: String
    public var userId: String
    public var entitlement: String
    public var purchase: OwnerPurchase

    public init(owner: OwnerKey, entitlement: String, purchase: OwnerPurchase) {
        schema = Self.schema
        bundleId = owner.bundleId
        userId = owner.userId
        self.entitlement = entitlement
        self.purchase = purchase
    }

    public var key: OwnerEntitlementKey {
        OwnerEntitlementKey(owner: OwnerKey(bundleId: bundleId, userId: userId), entitlement: entitlement)
    }

    public var recordKey: String { key.encoded }

    private enum CodingKeys: String, CodingKey { case schema, bundleId, userId, entitlement, purchase }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "expected \(Self.schema)")
        }
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        entitlement = try c.decode(String.self, forKey: .entitlement)
        purchase = try c.decode(OwnerPurchase.self, forKey: .purchase)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(entitlement, forKey: .entitlement)
        try c.encode(purchase, forKey: .purchase)
    }
}

/// One purchase as the owner view sees it (a member of `entitlement-state/v1`'s `purchases`).
public struct OwnerPurchase: Sendable, Codable, Equatable {
    public var originalTransactionId: String
    public var productId: String
    public var productType: ProductType
    public var status: PurchaseStatus
    /// Whether this purchase gives the owner access (per fulfil; stacking aside).
    public var hasAccess: Bool
    /// When this purchase's access ends (for stacked non-renewing purchases: the stacked end).
    public var validUntil: Date?
    /// Start of the purchase's current period (stacking orders non-renewing purchases by it).
    public var periodStart: Date?
    /// Non-renewing length, for stacking.
    public var durationMonths: Int?
    /// Consumable units.
    public var quantity: Int?
    public var ownershipType: String
    public var environment: String
    /// Apple's `signedDate` of the change.
    public var changedAt: Date?
    /// The purchase's version (highest wins).
    public var version: Int

    public init(originalTransactionId: String, productId: String, productType: ProductType, status: PurchaseStatus,
                hasAccess: Bool, validUntil: Date?, periodStart: Date?, durationMonths: Int?, quantity: Int?,
                ownershipType: String, environment: String, changedAt: Date?, version: Int) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productType = productType
        self.status = status
        self.hasAccess = hasAccess
        self.validUntil = validUntil
        self.periodStart = periodStart
        self.durationMonths = durationMonths
        self.quantity = quantity
        self.ownershipType = ownershipType
        self.environment = environment
        self.changedAt = changedAt
        self.version = version
    }

    private enum CodingKeys: String, CodingKey {
        case originalTransactionId, productId, productType, status, hasAccess, validUntil, periodStart, durationMonths
        case quantity, ownershipType, environment, changedAt, version
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        productId = try c.decode(String.self, forKey: .productId)
        productType = try c.decode(ProductType.self, forKey: .productType)
        status = try c.decode(PurchaseStatus.self, forKey: .status)
        hasAccess = try c.decode(Bool.self, forKey: .hasAccess)
        validUntil = try c.decodeTimestampIfPresent(forKey: .validUntil)
        periodStart = try c.decodeTimestampIfPresent(forKey: .periodStart)
        durationMonths = try c.decodeIfPresent(Int.self, forKey: .durationMonths)
        quantity = try c.decodeIfPresent(Int.self, forKey: .quantity)
        ownershipType = try c.decode(String.self, forKey: .ownershipType)
        environment = try c.decode(String.self, forKey: .environment)
        changedAt = try c.decodeTimestampIfPresent(forKey: .changedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(productId, forKey: .productId)
        try c.encode(productType, forKey: .productType)
        try c.encode(status, forKey: .status)
        try c.encode(hasAccess, forKey: .hasAccess)
        try c.encodeTimestamp(validUntil, forKey: .validUntil)
        try c.encodeTimestamp(periodStart, forKey: .periodStart)
        try c.encode(durationMonths, forKey: .durationMonths)
        try c.encode(quantity, forKey: .quantity)
        try c.encode(ownershipType, forKey: .ownershipType)
        try c.encode(environment, forKey: .environment)
        try c.encodeTimestamp(changedAt, forKey: .changedAt)
        try c.encode(version, forKey: .version)
    }
}
