import AppStore
import Foundation

/// One transaction whose signature and chain the verifier checked, in Apple's vocabulary
/// (the fields of `JWSTransactionDecodedPayload` that fulfilment needs).
///
/// Apple-originated enumerations are stored raw (`type`, `environment`), with typed views on top,
/// so values Apple adds later never break decoding (the app-store-server-library pattern).
/// Dates are RFC 3339 UTC strings or `null` on the wire.
///
/// Optional members are spelled `Optional<T>`: `T?` gives a stored property an implicit `nil`
/// initial value, and with one every initializer builds the value in a temporary and copies it
/// out, a retain and a release per member for each record (docs/benchmarks.md, session 25).
public struct VerifiedTransaction: Sendable, Codable, Equatable {
    /// The App Store transaction id.
    public var transactionId: String
    /// The first transaction of the purchase (stable across renewals).
    public var originalTransactionId: String
    /// The app's bundle identifier.
    public var bundleId: String
    /// The App Store product id.
    public var productId: String
    /// Apple's raw product type, e.g. `"Auto-Renewable Subscription"`, `"Non-Consumable"`,
    /// `"Consumable"`, `"Non-Renewing Subscription"`.
    public var type: String
    /// Units bought (consumables may be bought several at once).
    public var quantity: Int
    /// When the user bought this period or item.
    public var purchaseDate: Optional<Date>
    /// End of the subscription period (auto-renewable only).
    public var expiresDate: Optional<Date>
    /// Set when Apple refunded or revoked the transaction.
    public var revocationDate: Optional<Date>
    /// Apple's revocation reason (0 other, 1 app issue), when revoked.
    public var revocationReason: Optional<Int>
    /// Apple's raw environment, `"Production"`, `"Sandbox"`, `"Xcode"`, `"LocalTesting"`.
    public var environment: String
    /// When Apple signed the JWS; the instant "now" as far as the data is concerned.
    public var signedDate: Optional<Date>
    /// The UUID the app attached at purchase time, if any.
    public var appAccountToken: Optional<String>
    /// Set when Apple says this period's product was upgraded away (its access ends now).
    public var isUpgraded: Optional<Bool>
    /// Apple's raw `inAppOwnershipType` (`PURCHASED`, `FAMILY_SHARED`); nil when Apple gave none.
    public var ownershipType: Optional<String>
    /// Which App Store Server Notification carried this transaction, when one did (`null` for a
    /// transaction submitted directly): the seam the subscription lifecycle builds on.
    public var notification: Optional<NotificationSource>

    /// Creates a transaction. Not inlined: inlined into a caller reading another value's fields, it
    /// built the transaction in a temporary and copied it out (a retain per field).
    @inline(never)
    public init(transactionId: String, originalTransactionId: String, bundleId: String, productId: String,
                type: String, quantity: Int = 1, purchaseDate: Date?, expiresDate: Date? = nil,
                revocationDate: Date? = nil, revocationReason: Int? = nil, environment: String = "Production",
                signedDate: Date?, appAccountToken: String? = nil, isUpgraded: Bool? = nil, ownershipType: String? = nil,
                notification: NotificationSource? = nil) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.type = type
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.environment = environment
        self.signedDate = signedDate
        self.appAccountToken = appAccountToken
        self.isUpgraded = isUpgraded
        self.ownershipType = ownershipType
        self.notification = notification
    }

    /// When Apple signed the input that carried this transaction: the notification's `signedDate`
    /// when a notification did, else the transaction's own (what orders changes of one purchase).
    public var appleSignedDate: Date? { notification?.signedDate ?? signedDate }

    /// The typed view of ``type``; nil for a type this build does not know.
    public var productType: ProductType? { ProductType(appleType: type) }

    private enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, bundleId, productId, type, quantity, purchaseDate
        case expiresDate, revocationDate, revocationReason, environment, signedDate, appAccountToken, notification
        case isUpgraded, ownershipType
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        productId = try c.decode(String.self, forKey: .productId)
        type = try c.decode(String.self, forKey: .type)
        quantity = try c.decodeIfPresent(Int.self, forKey: .quantity) ?? 1
        purchaseDate = try c.decodeTimestampIfPresent(forKey: .purchaseDate)
        expiresDate = try c.decodeTimestampIfPresent(forKey: .expiresDate)
        revocationDate = try c.decodeTimestampIfPresent(forKey: .revocationDate)
        revocationReason = try c.decodeIfPresent(Int.self, forKey: .revocationReason)
        environment = try c.decode(String.self, forKey: .environment)
        signedDate = try c.decodeTimestampIfPresent(forKey: .signedDate)
        appAccountToken = try c.decodeIfPresent(String.self, forKey: .appAccountToken)
        notification = try c.decodeIfPresent(NotificationSource.self, forKey: .notification)
        isUpgraded = try c.decodeIfPresent(Bool.self, forKey: .isUpgraded)
        ownershipType = try c.decodeIfPresent(String.self, forKey: .ownershipType)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(productId, forKey: .productId)
        try c.encode(type, forKey: .type)
        try c.encode(quantity, forKey: .quantity)
        try c.encodeTimestamp(purchaseDate, forKey: .purchaseDate)
        try c.encodeTimestamp(expiresDate, forKey: .expiresDate)
        try c.encodeTimestamp(revocationDate, forKey: .revocationDate)
        try c.encode(revocationReason, forKey: .revocationReason)
        try c.encode(environment, forKey: .environment)
        try c.encodeTimestamp(signedDate, forKey: .signedDate)
        try c.encode(appAccountToken, forKey: .appAccountToken)
        try c.encode(notification, forKey: .notification)
        try c.encode(isUpgraded, forKey: .isUpgraded)
        try c.encode(ownershipType, forKey: .ownershipType)
    }
}
