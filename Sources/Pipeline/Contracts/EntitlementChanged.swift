import AppStore
import Foundation

/// `entitlement-changed/v2`: one change of one purchase for one owner and entitlement, on
/// ``Topics/entitlementsChanged``, keyed by the ``OwnerKey`` and written to the partition number of
/// the `receipts.verified` record it came from (``OutputPartitioning/inputPartition``), so every
/// change of a purchase is in one partition, in order; that partition is also fulfil's ledger.
///
/// A backend applies it blindly: `status`, `hasAccess` and `validUntil` are the *resulting* state
/// of this purchase for this owner and entitlement (a refund of an old period after a renewal says
/// `active`). `change` says what happened (``EntitlementChangeKind``), `action` its coarse effect.
/// `purchase` is the purchase's whole resulting ``PurchaseState`` (what the ledger rebuilds from).
/// The JSON Schema is `Config/schemas/entitlement-changed.v2.schema.json`.
///
/// `eventId` is deterministic: SHA-256 of `originalTransactionId|version|index`, where `version`
/// counts the changes applied to the purchase and `index` orders the events of one input. The
/// same change delivered twice changes nothing the second time, so it is one event; a new change
/// of the same transaction (extension, reinstatement, grace period) is a new version, so a new id.
///
/// Optional members are spelled `Optional<T>`, as in ``VerifiedTransaction``, whose documentation
/// says why.
public struct EntitlementChanged: Sendable, Codable, Equatable {
    /// The schema identifier of this contract.
    public static let schema = "entitlement-changed/v2"

    public var schema: String
    public var eventId: String
    public var change: EntitlementChangeKind
    public var action: EntitlementAction
    public var bundleId: String
    public var userId: String
    public var entitlement: String
    public var productId: String
    public var productType: ProductType
    /// The transaction that caused the change.
    public var transactionId: String
    public var originalTransactionId: String
    /// Units granted, taken back (clawback) or restored (consumables); nil otherwise.
    public var quantity: Optional<Int>
    public var status: PurchaseStatus
    public var hasAccess: Bool
    /// When access ends (nil: no end).
    public var validUntil: Optional<Date>
    /// When the change took effect.
    public var effectiveAt: Date
    public var autoRenew: Optional<Bool>
    public var pendingProductId: Optional<String>
    public var expirationReason: Optional<String>
    public var revocationReason: Optional<Int>
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var ownershipType: String
    /// Apple's raw environment.
    public var environment: String
    /// The notification that caused the change (nil for a transaction submitted directly).
    public var notificationType: Optional<String>
    public var notificationSubtype: Optional<String>
    public var submissionId: String
    /// Apple's `signedDate` of the input.
    public var signedDate: Optional<Date>
    /// The purchase's resulting state.
    public var purchase: PurchaseState

    /// Creates an event for one change of an applied input. Not inlined: inlined, it was built in a
    /// temporary and copied (a retain per string) into the caller's output.
    @inline(never)
    public init(change: borrowing LifecycleChange, index: Int, purchase: PurchaseState, transaction: borrowing VerifiedTransaction,
                submissionId: String, effectiveAt: Date) {
        schema = Self.schema
        eventId = Self.eventId(originalTransactionId: purchase.originalTransactionId, version: purchase.version, index: index)
        self.change = change.kind
        action = change.action
        bundleId = change.owner.bundleId
        userId = change.owner.userId
        entitlement = change.entitlement
        productId = change.productId
        productType = purchase.productType
        transactionId = transaction.transactionId
        originalTransactionId = purchase.originalTransactionId
        quantity = change.quantity
        status = change.status
        hasAccess = change.hasAccess
        validUntil = change.validUntil
        self.effectiveAt = effectiveAt
        autoRenew = purchase.autoRenew
        pendingProductId = purchase.pendingProductId
        expirationReason = change.status == .expired ? purchase.expirationReason : nil
        revocationReason = change.status == .revoked ? purchase.revocationReason : nil
        ownershipType = purchase.ownershipType
        environment = purchase.environment
        notificationType = transaction.notification?.notificationType
        notificationSubtype = transaction.notification?.subtype
        self.submissionId = submissionId
        signedDate = transaction.appleSignedDate
        self.purchase = purchase
    }

    /// The deterministic event id: lowercase hex SHA-256 of `originalTransactionId|version|index`.
    public static func eventId(originalTransactionId: String, version: Int, index: Int) -> String {
        SHA256.hexDigest("\(originalTransactionId)|\(version)|\(index)")
    }

    /// The owner of the entitlement.
    public var owner: OwnerKey { OwnerKey(bundleId: bundleId, userId: userId) }

    private enum CodingKeys: String, CodingKey {
        case schema, eventId, change, action, bundleId, userId, entitlement, productId, productType, transactionId
        case originalTransactionId, quantity, status, hasAccess, validUntil, effectiveAt, autoRenew, pendingProductId
        case expirationReason, revocationReason, ownershipType, environment, notificationType, notificationSubtype
        case submissionId, signedDate, purchase
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "expected \(Self.schema)")
        }
        eventId = try c.decode(String.self, forKey: .eventId)
        change = try c.decode(EntitlementChangeKind.self, forKey: .change)
        action = try c.decode(EntitlementAction.self, forKey: .action)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        entitlement = try c.decode(String.self, forKey: .entitlement)
        productId = try c.decode(String.self, forKey: .productId)
        productType = try c.decode(ProductType.self, forKey: .productType)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        quantity = try c.decodeIfPresent(Int.self, forKey: .quantity)
        status = try c.decode(PurchaseStatus.self, forKey: .status)
        hasAccess = try c.decode(Bool.self, forKey: .hasAccess)
        validUntil = try c.decodeTimestampIfPresent(forKey: .validUntil)
        effectiveAt = try c.decodeTimestamp(forKey: .effectiveAt)
        autoRenew = try c.decodeIfPresent(Bool.self, forKey: .autoRenew)
        pendingProductId = try c.decodeIfPresent(String.self, forKey: .pendingProductId)
        expirationReason = try c.decodeIfPresent(String.self, forKey: .expirationReason)
        revocationReason = try c.decodeIfPresent(Int.self, forKey: .revocationReason)
        ownershipType = try c.decode(String.self, forKey: .ownershipType)
        environment = try c.decode(String.self, forKey: .environment)
        notificationType = try c.decodeIfPresent(String.self, forKey: .notificationType)
        notificationSubtype = try c.decodeIfPresent(String.self, forKey: .notificationSubtype)
        submissionId = try c.decode(String.self, forKey: .submissionId)
        signedDate = try c.decodeTimestampIfPresent(forKey: .signedDate)
        purchase = try c.decode(PurchaseState.self, forKey: .purchase)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(eventId, forKey: .eventId)
        try c.encode(change, forKey: .change)
        try c.encode(action, forKey: .action)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(entitlement, forKey: .entitlement)
        try c.encode(productId, forKey: .productId)
        try c.encode(productType, forKey: .productType)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(quantity, forKey: .quantity)
        try c.encode(status, forKey: .status)
        try c.encode(hasAccess, forKey: .hasAccess)
        try c.encodeTimestamp(validUntil, forKey: .validUntil)
        try c.encodeTimestamp(effectiveAt, forKey: .effectiveAt)
        try c.encode(autoRenew, forKey: .autoRenew)
        try c.encode(pendingProductId, forKey: .pendingProductId)
        try c.encode(expirationReason, forKey: .expirationReason)
        try c.encode(revocationReason, forKey: .revocationReason)
        try c.encode(ownershipType, forKey: .ownershipType)
        try c.encode(environment, forKey: .environment)
        try c.encode(notificationType, forKey: .notificationType)
        try c.encode(notificationSubtype, forKey: .notificationSubtype)
        try c.encode(submissionId, forKey: .submissionId)
        try c.encodeTimestamp(signedDate, forKey: .signedDate)
        try c.encode(purchase, forKey: .purchase)
    }
}

/// Reads back only what fulfil's ledger needs of an `entitlement-changed/v2` record (its
/// `purchase`), so a rebuild does not decode every field.
struct PurchaseOfEvent: Decodable {
    var purchase: PurchaseState

    private enum CodingKeys: String, CodingKey { case schema, purchase }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard try c.decode(String.self, forKey: .schema) == EntitlementChanged.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "not \(EntitlementChanged.schema)")
        }
        purchase = try c.decode(PurchaseState.self, forKey: .purchase)
    }
}
