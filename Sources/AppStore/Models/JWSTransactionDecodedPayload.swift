import Foundation

/// A verified StoreKit 2 transaction (`signedTransactionInfo` / `signedTransaction` payload).
///
/// Follows Apple's raw + typed pattern: enumerated claims are stored raw (`rawType`,
/// `rawEnvironment`, …) and exposed through typed computed views (`type`, `environment`, …) that
/// are `nil` for values this version does not know, so new Apple values never break decoding.
/// Dates come from integer milliseconds since 1970. Unknown members are ignored.
///
/// Required members (else `missing-field`): `transactionId`, `originalTransactionId`, `bundleId`,
/// `productId`, `purchaseDate`, `type`, `environment`. This is stricter than Apple's library, which
/// makes every member optional; every real transaction carries them.
///
/// `Codable` uses Apple's member names; encode dates with `.millisecondsSince1970` to reproduce
/// Apple's JSON shape. Decoding through `Codable` performs no verification.
public struct JWSTransactionDecodedPayload: Sendable, Hashable, Codable {
    /// Unique id of this transaction.
    public var transactionId: String
    /// Id of the original purchase; identical across renewals and restores.
    public var originalTransactionId: String
    /// Id of the subscription purchase event across devices.
    public var webOrderLineItemId: String?
    /// The app's bundle identifier (exact case).
    public var bundleId: String
    /// The product identifier.
    public var productId: String
    /// The subscription group of an auto-renewable subscription.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer (or the renewal date).
    public var purchaseDate: Date
    /// Purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When a subscription expires or renews.
    public var expiresDate: Date?
    /// Number of consumable products purchased.
    public var quantity: Int32?
    /// Raw `type`; see ``type``.
    public var rawType: String
    /// Raw `appAccountToken`; see ``appAccountToken``.
    public var rawAppAccountToken: String?
    /// Raw `inAppOwnershipType`; see ``inAppOwnershipType``.
    public var rawInAppOwnershipType: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// Raw `revocationReason`; see ``revocationReason``.
    public var rawRevocationReason: Int32?
    /// When the App Store refunded or revoked the transaction.
    public var revocationDate: Date?
    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// Raw `offerType`; see ``offerType``.
    public var rawOfferType: Int32?
    /// The offer code or promotional offer identifier.
    public var offerIdentifier: String?
    /// Raw `environment`; see ``environment``.
    public var rawEnvironment: String
    /// Three-letter storefront country code.
    public var storefront: String?
    /// Apple's storefront identifier.
    public var storefrontId: String?
    /// Raw `transactionReason`; see ``transactionReason``.
    public var rawTransactionReason: String?
    /// ISO 4217 currency code of ``price``.
    public var currency: String?
    /// Price in milliunits of ``currency``.
    public var price: Int64?
    /// Raw `offerDiscountType`; see ``offerDiscountType``.
    public var rawOfferDiscountType: String?
    /// Id of the app transaction (app download) this purchase belongs to.
    public var appTransactionId: String?
    /// ISO 8601 duration of the applied offer.
    public var offerPeriod: String?

    /// The product type, or `nil` for an unknown value.
    public var type: ProductType? { ProductType(appleType: rawType) }
    /// The environment, or `nil` for an unknown value.
    public var environment: AppStoreEnvironment? { AppStoreEnvironment(rawValue: rawEnvironment) }
    /// The app account token as a UUID, or `nil` when absent or not a UUID.
    public var appAccountToken: UUID? { rawAppAccountToken.flatMap(UUID.init(uuidString:)) }
    /// The ownership type, or `nil` when absent or unknown.
    public var inAppOwnershipType: InAppOwnershipType? { rawInAppOwnershipType.flatMap(InAppOwnershipType.init(rawValue:)) }
    /// The revocation reason, or `nil` when absent or unknown.
    public var revocationReason: RevocationReason? { rawRevocationReason.flatMap(RevocationReason.init(rawValue:)) }
    /// The offer type, or `nil` when absent or unknown.
    public var offerType: OfferType? { rawOfferType.flatMap(OfferType.init(rawValue:)) }
    /// The transaction reason, or `nil` when absent or unknown.
    public var transactionReason: TransactionReason? { rawTransactionReason.flatMap(TransactionReason.init(rawValue:)) }
    /// The offer discount type, or `nil` when absent or unknown.
    public var offerDiscountType: OfferDiscountType? { rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
    /// Whether Apple refunded or revoked the transaction (a revocation date is present).
    public var isRevoked: Bool { revocationDate != nil }

    /// Creates a payload with the required members; set optional members afterwards.
    /// - Parameters:
    ///   - transactionId: Transaction id.
    ///   - originalTransactionId: Original transaction id.
    ///   - bundleId: Bundle identifier.
    ///   - productId: Product identifier.
    ///   - purchaseDate: Purchase date.
    ///   - rawType: Product type as Apple spells it.
    ///   - rawEnvironment: Environment as Apple spells it.
    public init(transactionId: String, originalTransactionId: String, bundleId: String, productId: String,
                purchaseDate: Date, rawType: String, rawEnvironment: String) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.rawType = rawType
        self.rawEnvironment = rawEnvironment
    }

    /// Builds the model from a verified payload object.
    /// - Throws: ``VerificationError`` (`missing-field`, `invalid-field`, `invalid-date`).
    init(json: JSONObject, dateRange: ClosedRange<Int64>) throws(VerificationError) {
        self.init(transactionId: try json.requiredString("transactionId"),
                  originalTransactionId: try json.requiredString("originalTransactionId"),
                  bundleId: try json.requiredString("bundleId"),
                  productId: try json.requiredString("productId"),
                  purchaseDate: try json.requiredDate("purchaseDate", range: dateRange),
                  rawType: try json.requiredString("type"),
                  rawEnvironment: try json.requiredString("environment"))
        webOrderLineItemId = try json.optionalString("webOrderLineItemId")
        subscriptionGroupIdentifier = try json.optionalString("subscriptionGroupIdentifier")
        originalPurchaseDate = try json.optionalDate("originalPurchaseDate", range: dateRange)
        expiresDate = try json.optionalDate("expiresDate", range: dateRange)
        quantity = try json.optionalInt32("quantity")
        rawAppAccountToken = try json.optionalString("appAccountToken")
        rawInAppOwnershipType = try json.optionalString("inAppOwnershipType")
        signedDate = try json.optionalDate("signedDate", range: dateRange)
        rawRevocationReason = try json.optionalInt32("revocationReason")
        revocationDate = try json.optionalDate("revocationDate", range: dateRange)
        isUpgraded = try json.optionalBool("isUpgraded")
        rawOfferType = try json.optionalInt32("offerType")
        offerIdentifier = try json.optionalString("offerIdentifier")
        storefront = try json.optionalString("storefront")
        storefrontId = try json.optionalString("storefrontId")
        rawTransactionReason = try json.optionalString("transactionReason")
        currency = try json.optionalString("currency")
        price = try json.optionalInt64("price")
        rawOfferDiscountType = try json.optionalString("offerDiscountType")
        appTransactionId = try json.optionalString("appTransactionId")
        offerPeriod = try json.optionalString("offerPeriod")
    }

    private enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, webOrderLineItemId, bundleId, productId
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity
        case rawType = "type"
        case rawAppAccountToken = "appAccountToken"
        case rawInAppOwnershipType = "inAppOwnershipType"
        case signedDate
        case rawRevocationReason = "revocationReason"
        case revocationDate, isUpgraded
        case rawOfferType = "offerType"
        case offerIdentifier
        case rawEnvironment = "environment"
        case storefront, storefrontId
        case rawTransactionReason = "transactionReason"
        case currency, price
        case rawOfferDiscountType = "offerDiscountType"
        case appTransactionId, offerPeriod
    }
}
