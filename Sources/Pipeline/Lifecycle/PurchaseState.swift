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
///
/// The fields sit behind one reference, copied on the first write to a shared state: fulfil
/// passes a state through the ledger, the lifecycle and both outputs, and copying 28 fields,
/// most of them strings, cost a retain and a release per field and copy, about ten copies per
/// record. Read and write them as the state's own members (`state.version += 1`).
@dynamicMemberLookup
public struct PurchaseState: Sendable, Equatable, Codable {
    /// The fields of a ``PurchaseState``. Optional ones are spelled `Optional<T>`, as in
    /// ``VerifiedTransaction``, whose documentation says why.
    public struct Fields: Sendable, Equatable {
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
        public var validUntil: Optional<Date>
        /// The transaction of the current period (auto-renewable) or the last one seen.
        public var latestTransactionId: String
        /// Start of the current period (`purchaseDate` of its transaction).
        public var periodStart: Optional<Date>
        /// End of the current period (auto-renewable).
        public var expiresDate: Optional<Date>
        /// Length of a non-renewing subscription (from the catalogue), for the owner view's stacking.
        public var durationMonths: Optional<Int>
        /// Units granted (consumables).
        public var quantity: Optional<Int>
        public var gracePeriodExpiresDate: Optional<Date>
        /// Auto-renew status as last reported (nil: never reported).
        public var autoRenew: Optional<Bool>
        /// The product that renews next when it differs from ``productId``.
        public var pendingProductId: Optional<String>
        /// Why the subscription expired: `voluntary`, `billingError`, `priceIncrease`,
        /// `productNotAvailable`, `upgraded`, `other` (nil while active).
        public var expirationReason: Optional<String>
        public var revocationDate: Optional<Date>
        /// Apple's revocation reason (0 other, 1 app issue); `transferred` revocations carry nil.
        public var revocationReason: Optional<Int>
        /// `PURCHASED` or `FAMILY_SHARED`.
        public var ownershipType: String
        /// Apple's raw environment.
        public var environment: String
        /// Set when a policy withholds access the state would otherwise give (`sandbox`).
        public var accessWithheld: Optional<String>
        /// The newest `signedDate` applied for the current period.
        public var signedDate: Optional<Date>
        /// The newest `signedDate` of an applied auto-renew or pending-product change.
        public var renewalSignedDate: Optional<Date>
        /// Past periods already refunded (kept to make their refund events idempotent; at most 32).
        public var refundedTransactionIds: [String]
        /// Incremented by every applied change; the ledger keeps the highest.
        public var version: Int
        /// Apple's `signedDate` of the input that made ``owner`` the owner: another user's claim moves
        /// the purchase (transfer policy) only with a later input (nil: before this was recorded).
        public var ownerSince: Optional<Date>
    }

    /// The one reference to the fields (copy on write: mutated only while uniquely referenced).
    private final class Box: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    public init(originalTransactionId: String, bundleId: String, userId: String, entitlement: String, productId: String,
                productType: ProductType, status: PurchaseStatus = .active, hasAccess: Bool = true, validUntil: Date? = nil,
                latestTransactionId: String, periodStart: Date? = nil, expiresDate: Date? = nil, durationMonths: Int? = nil,
                quantity: Int? = nil, gracePeriodExpiresDate: Date? = nil, autoRenew: Bool? = nil, pendingProductId: String? = nil,
                expirationReason: String? = nil, revocationDate: Date? = nil, revocationReason: Int? = nil,
                ownershipType: String = "PURCHASED", environment: String, accessWithheld: String? = nil,
                signedDate: Date? = nil, renewalSignedDate: Date? = nil, refundedTransactionIds: [String] = [], version: Int = 0,
                ownerSince: Date? = nil) {
        box = Box(Fields(
            originalTransactionId: originalTransactionId, bundleId: bundleId, userId: userId,
            entitlement: entitlement, productId: productId, productType: productType, status: status,
            hasAccess: hasAccess, validUntil: validUntil, latestTransactionId: latestTransactionId,
            periodStart: periodStart, expiresDate: expiresDate, durationMonths: durationMonths, quantity: quantity,
            gracePeriodExpiresDate: gracePeriodExpiresDate, autoRenew: autoRenew, pendingProductId: pendingProductId,
            expirationReason: expirationReason, revocationDate: revocationDate, revocationReason: revocationReason,
            ownershipType: ownershipType, environment: environment, accessWithheld: accessWithheld,
            signedDate: signedDate, renewalSignedDate: renewalSignedDate,
            refundedTransactionIds: refundedTransactionIds, version: version, ownerSince: ownerSince))
    }

    /// A field, read in place (a getter returning it would copy every field out of the box first)
    /// and written after copying the fields when another state shares them.
    public subscript<T>(dynamicMember field: WritableKeyPath<Fields, T>) -> T {
        _read { yield box.fields[keyPath: field] }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            yield &box.fields[keyPath: field]
        }
    }

    public static func == (lhs: PurchaseState, rhs: PurchaseState) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    /// The recorded owner.
    public var owner: OwnerKey {
        get { OwnerKey(bundleId: box.fields.bundleId, userId: box.fields.userId) }
        set { (self.bundleId, self.userId) = (newValue.bundleId, newValue.userId) }
    }

    /// When a non-renewing subscription's own period ends (its start plus the catalogue's months;
    /// stacking is the owner view's business); nil for other products.
    public var nonRenewingEnd: Date? {
        guard box.fields.productType == .nonRenewing else { return nil }
        return box.fields.periodStart.map { UTCCalendar.adding(months: box.fields.durationMonths ?? 0, to: $0) }
    }

    /// Whether the purchase was shared through Family Sharing.
    public var isFamilyShared: Bool { box.fields.ownershipType == "FAMILY_SHARED" }

    private enum CodingKeys: String, CodingKey {
        case originalTransactionId, bundleId, userId, entitlement, productId, productType, status, hasAccess, validUntil
        case latestTransactionId, periodStart, expiresDate, durationMonths, quantity, gracePeriodExpiresDate, autoRenew
        case pendingProductId, expirationReason, revocationDate, revocationReason, ownershipType, environment
        case accessWithheld, signedDate, renewalSignedDate, refundedTransactionIds, version, ownerSince
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            originalTransactionId: try c.decode(String.self, forKey: .originalTransactionId),
            bundleId: try c.decode(String.self, forKey: .bundleId),
            userId: try c.decode(String.self, forKey: .userId),
            entitlement: try c.decode(String.self, forKey: .entitlement),
            productId: try c.decode(String.self, forKey: .productId),
            productType: try c.decode(ProductType.self, forKey: .productType),
            status: try c.decode(PurchaseStatus.self, forKey: .status),
            hasAccess: try c.decode(Bool.self, forKey: .hasAccess),
            validUntil: try c.decodeTimestampIfPresent(forKey: .validUntil),
            latestTransactionId: try c.decode(String.self, forKey: .latestTransactionId),
            periodStart: try c.decodeTimestampIfPresent(forKey: .periodStart),
            expiresDate: try c.decodeTimestampIfPresent(forKey: .expiresDate),
            durationMonths: try c.decodeIfPresent(Int.self, forKey: .durationMonths),
            quantity: try c.decodeIfPresent(Int.self, forKey: .quantity),
            gracePeriodExpiresDate: try c.decodeTimestampIfPresent(forKey: .gracePeriodExpiresDate),
            autoRenew: try c.decodeIfPresent(Bool.self, forKey: .autoRenew),
            pendingProductId: try c.decodeIfPresent(String.self, forKey: .pendingProductId),
            expirationReason: try c.decodeIfPresent(String.self, forKey: .expirationReason),
            revocationDate: try c.decodeTimestampIfPresent(forKey: .revocationDate),
            revocationReason: try c.decodeIfPresent(Int.self, forKey: .revocationReason),
            ownershipType: try c.decode(String.self, forKey: .ownershipType),
            environment: try c.decode(String.self, forKey: .environment),
            accessWithheld: try c.decodeIfPresent(String.self, forKey: .accessWithheld),
            signedDate: try c.decodeTimestampIfPresent(forKey: .signedDate),
            renewalSignedDate: try c.decodeTimestampIfPresent(forKey: .renewalSignedDate),
            refundedTransactionIds: try c.decodeIfPresent([String].self, forKey: .refundedTransactionIds) ?? [],
            version: try c.decode(Int.self, forKey: .version),
            ownerSince: try c.decodeTimestampIfPresent(forKey: .ownerSince))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.originalTransactionId, forKey: .originalTransactionId)
        try c.encode(self.bundleId, forKey: .bundleId)
        try c.encode(self.userId, forKey: .userId)
        try c.encode(self.entitlement, forKey: .entitlement)
        try c.encode(self.productId, forKey: .productId)
        try c.encode(self.productType, forKey: .productType)
        try c.encode(self.status, forKey: .status)
        try c.encode(self.hasAccess, forKey: .hasAccess)
        try c.encodeTimestamp(self.validUntil, forKey: .validUntil)
        try c.encode(self.latestTransactionId, forKey: .latestTransactionId)
        try c.encodeTimestamp(self.periodStart, forKey: .periodStart)
        try c.encodeTimestamp(self.expiresDate, forKey: .expiresDate)
        try c.encode(self.durationMonths, forKey: .durationMonths)
        try c.encode(self.quantity, forKey: .quantity)
        try c.encodeTimestamp(self.gracePeriodExpiresDate, forKey: .gracePeriodExpiresDate)
        try c.encode(self.autoRenew, forKey: .autoRenew)
        try c.encode(self.pendingProductId, forKey: .pendingProductId)
        try c.encode(self.expirationReason, forKey: .expirationReason)
        try c.encodeTimestamp(self.revocationDate, forKey: .revocationDate)
        try c.encode(self.revocationReason, forKey: .revocationReason)
        try c.encode(self.ownershipType, forKey: .ownershipType)
        try c.encode(self.environment, forKey: .environment)
        try c.encode(self.accessWithheld, forKey: .accessWithheld)
        try c.encodeTimestamp(self.signedDate, forKey: .signedDate)
        try c.encodeTimestamp(self.renewalSignedDate, forKey: .renewalSignedDate)
        try c.encode(self.refundedTransactionIds, forKey: .refundedTransactionIds)
        try c.encode(self.version, forKey: .version)
        try c.encodeTimestamp(self.ownerSince, forKey: .ownerSince)
    }
}
