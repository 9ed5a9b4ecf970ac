import AppStore
import Foundation

/// Everything fulfil knows of one purchase (one `originalTransactionId`) after applying the
/// inputs it has seen: the ledger's value, and the `purchase` member of every
/// `entitlement-changed/v2`, so a ledger partition is rebuilt by keeping, per purchase, the state
/// with the highest ``version`` read back from the output partition.
///
/// Ordering fields: ``periodStart``/``expiresDate`` order auto-renewable periods (a later period
/// always wins), ``signedDate`` orders changes of one period, ``renewalSignedDate`` orders
/// auto-renew and pending-product changes. None of them is ever moved backwards.
public struct PurchaseState: Sendable, Equatable, Codable {
    public var originalTransactionId: String
    /// The recorded owner: the first user who submitted the purchase (or the transfer target).
    public var bundleId: String
    public var userId: String
    /// The catalogue entitlement of ``productId``.
    public var entitlement: String
    public var productId: String
    public var productType: ProductType
    public var status: PurchaseStatus
    /// Whether the owner has access per this state (status, policies); see ``validUntil`` for when it ends.
    public var hasAccess: Bool
    /// When access ends: the period end, the grace period end, the revocation date, the
    /// non-renewing purchase's own end; nil for a non-consumable or consumable kept forever.
    public var validUntil: Date?
    /// The transaction of the current period (auto-renewable) or the last one seen.
    public var latestTransactionId: String
    /// Start of the current period (`purchaseDate` of its transaction).
    public var periodStart: Date?
    /// End of the current period (auto-renewable).
    public var expiresDate: Date?
    /// Length of a non-renewing subscription (from the catalogue), for the owner view's stacking.
    public var durationMonths: Int?
    /// Units granted (consumables).
    public var quantity: Int?
    public var gracePeriodExpiresDate: Date?
    /// Auto-renew status as last reported (nil: never reported).
    public var autoRenew: Bool?
    /// The product that renews next when it differs from ``productId``.
    public var pendingProductId: String?
    /// Why the subscription expired: `voluntary`, `billingError`, `priceIncrease`,
    /// `productNotAvailable`, `upgraded`, `other` (nil while active).
    public var expirationReason: String?
    public var revocationDate: Date?
    /// Apple's revocation reason (0 other, 1 app issue); `transferred` revocations carry nil.
    public var revocationReason: Int?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var ownershipType: String
    /// Apple's raw environment.
    public var environment: String
    /// Set when a policy withholds access the state would otherwise give (`sandbox`).
    public var accessWithheld: String?
    /// The newest `signedDate` applied for the current period.
    public var signedDate: Date?
    /// The newest `signedDate` of an applied auto-renew or pending-product change.
    public var renewalSignedDate: Date?
    /// Past periods already refunded (kept to make their refund events idempotent; at most 32).
    public var refundedTransactionIds: [String]
    /// Incremented by every applied change; the ledger keeps the highest.
    public var version: Int
    /// Apple's `signedDate` of the input that made ``owner`` the owner: another user's claim moves
    /// the purchase (transfer policy) only with a later input (nil: before this was recorded).
    public var ownerSince: Date?

    public init(originalTransactionId: String, bundleId: String, userId: String, entitlement: String, productId: String,
                productType: ProductType, status: PurchaseStatus = .active, hasAccess: Bool = true, validUntil: Date? = nil,
                latestTransactionId: String, periodStart: Date? = nil, expiresDate: Date? = nil, durationMonths: Int? = nil,
                quantity: Int? = nil, gracePeriodExpiresDate: Date? = nil, autoRenew: Bool? = nil, pendingProductId: String? = nil,
                expirationReason: String? = nil, revocationDate: Date? = nil, revocationReason: Int? = nil,
                ownershipType: String = "PURCHASED", environment: String, accessWithheld: String? = nil,
                signedDate: Date? = nil, renewalSignedDate: Date? = nil, refundedTransactionIds: [String] = [], version: Int = 0,
                ownerSince: Date? = nil) {
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.userId = userId
        self.entitlement = entitlement
        self.productId = productId
        self.productType = productType
        self.status = status
        self.hasAccess = hasAccess
        self.validUntil = validUntil
        self.latestTransactionId = latestTransactionId
        self.periodStart = periodStart
        self.expiresDate = expiresDate
        self.durationMonths = durationMonths
        self.quantity = quantity
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.autoRenew = autoRenew
        self.pendingProductId = pendingProductId
        self.expirationReason = expirationReason
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.ownershipType = ownershipType
        self.environment = environment
        self.accessWithheld = accessWithheld
        self.signedDate = signedDate
        self.renewalSignedDate = renewalSignedDate
        self.refundedTransactionIds = refundedTransactionIds
        self.version = version
        self.ownerSince = ownerSince
    }

    /// The recorded owner.
    public var owner: OwnerKey {
        get { OwnerKey(bundleId: bundleId, userId: userId) }
        set { (bundleId, userId) = (newValue.bundleId, newValue.userId) }
    }

    /// When a non-renewing subscription's own period ends (its start plus the catalogue's months;
    /// stacking is the owner view's business); nil for other products.
    public var nonRenewingEnd: Date? {
        guard productType == .nonRenewing else { return nil }
        return periodStart.map { UTCCalendar.adding(months: durationMonths ?? 0, to: $0) }
    }

    /// Whether the purchase was shared through Family Sharing.
    public var isFamilyShared: Bool { ownershipType == "FAMILY_SHARED" }

    private enum CodingKeys: String, CodingKey {
        case originalTransactionId, bundleId, userId, entitlement, productId, productType, status, hasAccess, validUntil
        case latestTransactionId, periodStart, expiresDate, durationMonths, quantity, gracePeriodExpiresDate, autoRenew
        case pendingProductId, expirationReason, revocationDate, revocationReason, ownershipType, environment
        case accessWithheld, signedDate, renewalSignedDate, refundedTransactionIds, version, ownerSince
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        entitlement = try c.decode(String.self, forKey: .entitlement)
        productId = try c.decode(String.self, forKey: .productId)
        productType = try c.decode(ProductType.self, forKey: .productType)
        status = try c.decode(PurchaseStatus.self, forKey: .status)
        hasAccess = try c.decode(Bool.self, forKey: .hasAccess)
        validUntil = try c.decodeTimestampIfPresent(forKey: .validUntil)
        latestTransactionId = try c.decode(String.self, forKey: .latestTransactionId)
        periodStart = try c.decodeTimestampIfPresent(forKey: .periodStart)
        expiresDate = try c.decodeTimestampIfPresent(forKey: .expiresDate)
        durationMonths = try c.decodeIfPresent(Int.self, forKey: .durationMonths)
        quantity = try c.decodeIfPresent(Int.self, forKey: .quantity)
        gracePeriodExpiresDate = try c.decodeTimestampIfPresent(forKey: .gracePeriodExpiresDate)
        autoRenew = try c.decodeIfPresent(Bool.self, forKey: .autoRenew)
        pendingProductId = try c.decodeIfPresent(String.self, forKey: .pendingProductId)
        expirationReason = try c.decodeIfPresent(String.self, forKey: .expirationReason)
        revocationDate = try c.decodeTimestampIfPresent(forKey: .revocationDate)
        revocationReason = try c.decodeIfPresent(Int.self, forKey: .revocationReason)
        ownershipType = try c.decode(String.self, forKey: .ownershipType)
        environment = try c.decode(String.self, forKey: .environment)
        accessWithheld = try c.decodeIfPresent(String.self, forKey: .accessWithheld)
        signedDate = try c.decodeTimestampIfPresent(forKey: .signedDate)
        renewalSignedDate = try c.decodeTimestampIfPresent(forKey: .renewalSignedDate)
        refundedTransactionIds = try c.decodeIfPresent([String].self, forKey: .refundedTransactionIds) ?? []
        version = try c.decode(Int.self, forKey: .version)
        ownerSince = try c.decodeTimestampIfPresent(forKey: .ownerSince)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(entitlement, forKey: .entitlement)
        try c.encode(productId, forKey: .productId)
        try c.encode(productType, forKey: .productType)
        try c.encode(status, forKey: .status)
        try c.encode(hasAccess, forKey: .hasAccess)
        try c.encodeTimestamp(validUntil, forKey: .validUntil)
        try c.encode(latestTransactionId, forKey: .latestTransactionId)
        try c.encodeTimestamp(periodStart, forKey: .periodStart)
        try c.encodeTimestamp(expiresDate, forKey: .expiresDate)
        try c.encode(durationMonths, forKey: .durationMonths)
        try c.encode(quantity, forKey: .quantity)
        try c.encodeTimestamp(gracePeriodExpiresDate, forKey: .gracePeriodExpiresDate)
        try c.encode(autoRenew, forKey: .autoRenew)
        try c.encode(pendingProductId, forKey: .pendingProductId)
        try c.encode(expirationReason, forKey: .expirationReason)
        try c.encodeTimestamp(revocationDate, forKey: .revocationDate)
        try c.encode(revocationReason, forKey: .revocationReason)
        try c.encode(ownershipType, forKey: .ownershipType)
        try c.encode(environment, forKey: .environment)
        try c.encode(accessWithheld, forKey: .accessWithheld)
        try c.encodeTimestamp(signedDate, forKey: .signedDate)
        try c.encodeTimestamp(renewalSignedDate, forKey: .renewalSignedDate)
        try c.encode(refundedTransactionIds, forKey: .refundedTransactionIds)
        try c.encode(version, forKey: .version)
        try c.encodeTimestamp(ownerSince, forKey: .ownerSince)
    }
}
