import Foundation

/// `entitlement-changed/v1`: fulfil's output on ``Topics/entitlementsChanged``, keyed by the
/// ``OwnerKey`` and written to the partition number of the `receipts.verified` record it came
/// from (``OutputPartitioning/inputPartition``). Input partitions are chosen by
/// `originalTransactionId`, so every change of one purchase lands in one output partition, in
/// order; that partition is also fulfil's de-duplication ledger (``KafkaFulfilmentLedger``).
///
/// Fields: `schema`, `eventId`, `action` (``EntitlementAction``), `bundleId`, `userId`,
/// `entitlement` (catalogue name), `productId`, `productType` (``ProductType``), `transactionId`,
/// `originalTransactionId`, `quantity` (consumables: purchase quantity × units per purchase;
/// `null` otherwise), `validUntil` (RFC 3339 or `null` = no end), `effectiveAt` (RFC 3339),
/// `environment` (Apple's raw value), `submissionId`, `signedDate` (RFC 3339 or `null`).
///
/// `eventId` is deterministic (``eventId(transactionId:action:)``): processing the same
/// transaction twice yields the same id, so consumers can de-duplicate on it.
public struct EntitlementChanged: Sendable, Codable, Equatable, OutboundMessage {
    /// The schema identifier of this contract.
    public static let schema = "entitlement-changed/v1"
    public static var outputTopic: OutputTopic { .entitlementsChanged }
    /// Co-partitioned with `receipts.verified`: output partition `p` is the ledger of input partition `p`.
    public static var partitioning: OutputPartitioning { .inputPartition }

    /// The contract identifier, checked on decode.
    public var schema: String
    /// Deterministic id of this change (see ``eventId(transactionId:action:)``).
    public var eventId: String
    /// What happened to the entitlement.
    public var action: EntitlementAction
    /// The app's bundle identifier.
    public var bundleId: String
    /// The app's own user id (opaque).
    public var userId: String
    /// The catalogue entitlement name.
    public var entitlement: String
    /// The App Store product id.
    public var productId: String
    /// The catalogue product type.
    public var productType: ProductType
    /// The App Store transaction id.
    public var transactionId: String
    /// The first transaction of the purchase (stable across renewals).
    public var originalTransactionId: String
    /// Units granted (consumables only).
    public var quantity: Int?
    /// When access ends; nil means no end.
    public var validUntil: Date?
    /// When the change takes effect.
    public var effectiveAt: Date
    /// Apple's raw environment (`Production`, `Sandbox`, …).
    public var environment: String
    /// The producer's idempotency id of the submission.
    public var submissionId: String
    /// When Apple signed the underlying transaction.
    public var signedDate: Date?

    /// Creates a change with the current schema; `eventId` is derived from the transaction and action.
    public init(action: EntitlementAction, bundleId: String, userId: String, entitlement: String,
                productId: String, productType: ProductType, transactionId: String,
                originalTransactionId: String, quantity: Int?, validUntil: Date?, effectiveAt: Date,
                environment: String, submissionId: String, signedDate: Date?) {
        self.schema = Self.schema
        self.eventId = Self.eventId(transactionId: transactionId, action: action)
        self.action = action
        self.bundleId = bundleId
        self.userId = userId
        self.entitlement = entitlement
        self.productId = productId
        self.productType = productType
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.quantity = quantity
        self.validUntil = validUntil
        self.effectiveAt = effectiveAt
        self.environment = environment
        self.submissionId = submissionId
        self.signedDate = signedDate
    }

    /// The deterministic event id: lowercase hex SHA-256 of `transactionId + "|" + action`.
    ///
    /// A transaction id is unique per App Store transaction and the action says what happened to
    /// it, so the pair identifies the business event regardless of how often it is processed.
    public static func eventId(transactionId: String, action: EntitlementAction) -> String {
        SHA256.hexDigest(transactionId + "|" + action.rawValue)
    }

    /// The owner of the entitlement.
    public var owner: OwnerKey { OwnerKey(bundleId: bundleId, userId: userId) }
    public var recordKey: String { owner.encoded }

    private enum CodingKeys: String, CodingKey {
        case schema, eventId, action, bundleId, userId, entitlement, productId, productType, transactionId
        case originalTransactionId, quantity, validUntil, effectiveAt, environment, submissionId, signedDate
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        eventId = try c.decode(String.self, forKey: .eventId)
        action = try c.decode(EntitlementAction.self, forKey: .action)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        entitlement = try c.decode(String.self, forKey: .entitlement)
        productId = try c.decode(String.self, forKey: .productId)
        productType = try c.decode(ProductType.self, forKey: .productType)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        quantity = try c.decodeIfPresent(Int.self, forKey: .quantity)
        validUntil = try c.decodeTimestampIfPresent(forKey: .validUntil)
        effectiveAt = try c.decodeTimestamp(forKey: .effectiveAt)
        environment = try c.decode(String.self, forKey: .environment)
        submissionId = try c.decode(String.self, forKey: .submissionId)
        signedDate = try c.decodeTimestampIfPresent(forKey: .signedDate)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(eventId, forKey: .eventId)
        try c.encode(action, forKey: .action)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(entitlement, forKey: .entitlement)
        try c.encode(productId, forKey: .productId)
        try c.encode(productType, forKey: .productType)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(quantity, forKey: .quantity)
        try c.encodeTimestamp(validUntil, forKey: .validUntil)
        try c.encodeTimestamp(effectiveAt, forKey: .effectiveAt)
        try c.encode(environment, forKey: .environment)
        try c.encode(submissionId, forKey: .submissionId)
        try c.encodeTimestamp(signedDate, forKey: .signedDate)
    }
}
