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
@dynamicMemberLookup
public struct JWSTransactionDecodedPayload: Sendable, Hashable, Codable {
    /// The members of a ``JWSTransactionDecodedPayload``, read and written as the payload's own
    /// (`payload.expiresDate`). Optional ones are spelled `Optional<T>`: `T?` gives a stored
    /// property an implicit `nil` initial value, with which an initializer builds the value in a
    /// temporary and copies it out.
    public struct Fields: Sendable, Hashable, Codable {
        /// Unique id of this transaction.
        public var transactionId: String
        /// Id of the original purchase; identical across renewals and restores.
        public var originalTransactionId: String
        /// Id of the subscription purchase event across devices.
        public var webOrderLineItemId: Optional<String>
        /// The app's bundle identifier (exact case).
        public var bundleId: String
        /// The product identifier.
        public var productId: String
        /// The subscription group of an auto-renewable subscription.
        public var subscriptionGroupIdentifier: Optional<String>
        /// When the App Store charged the customer (or the renewal date).
        public var purchaseDate: Date
        /// Purchase date of the original transaction.
        public var originalPurchaseDate: Optional<Date>
        /// When a subscription expires or renews.
        public var expiresDate: Optional<Date>
        /// Number of consumable products purchased.
        public var quantity: Optional<Int32>
        /// Raw `type`; see ``type``.
        public var rawType: String
        /// Raw `appAccountToken`; see ``appAccountToken``.
        public var rawAppAccountToken: Optional<String>
        /// Raw `inAppOwnershipType`; see ``inAppOwnershipType``.
        public var rawInAppOwnershipType: Optional<String>
        /// When the App Store signed this payload.
        public var signedDate: Optional<Date>
        /// Raw `revocationReason`; see ``revocationReason``.
        public var rawRevocationReason: Optional<Int32>
        /// When the App Store refunded or revoked the transaction.
        public var revocationDate: Optional<Date>
        /// Whether the customer upgraded to another subscription.
        public var isUpgraded: Optional<Bool>
        /// Raw `offerType`; see ``offerType``.
        public var rawOfferType: Optional<Int32>
        /// The offer code or promotional offer identifier.
        public var offerIdentifier: Optional<String>
        /// Raw `environment`; see ``environment``.
        public var rawEnvironment: String
        /// Three-letter storefront country code.
        public var storefront: Optional<String>
        /// Apple's storefront identifier.
        public var storefrontId: Optional<String>
        /// Raw `transactionReason`; see ``transactionReason``.
        public var rawTransactionReason: Optional<String>
        /// ISO 4217 currency code of ``price``.
        public var currency: Optional<String>
        /// Price in milliunits of ``currency``.
        public var price: Optional<Int64>
        /// Raw `offerDiscountType`; see ``offerDiscountType``.
        public var rawOfferDiscountType: Optional<String>
        /// Id of the app transaction (app download) this purchase belongs to.
        public var appTransactionId: Optional<String>
        /// ISO 8601 duration of the applied offer.
        public var offerPeriod: Optional<String>

        /// The required members; the optional ones start as nil.
        init(transactionId: String, originalTransactionId: String, bundleId: String, productId: String,
             purchaseDate: Date, rawType: String, rawEnvironment: String) {
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId
            self.bundleId = bundleId
            self.productId = productId
            self.purchaseDate = purchaseDate
            self.rawType = rawType
            self.rawEnvironment = rawEnvironment
            (webOrderLineItemId, subscriptionGroupIdentifier, originalPurchaseDate, expiresDate, quantity) = (nil, nil, nil, nil, nil)
            (rawAppAccountToken, rawInAppOwnershipType, signedDate, rawRevocationReason, revocationDate) = (nil, nil, nil, nil, nil)
            (isUpgraded, rawOfferType, offerIdentifier, storefront, storefrontId) = (nil, nil, nil, nil, nil)
            (rawTransactionReason, currency, price, rawOfferDiscountType, appTransactionId, offerPeriod) = (nil, nil, nil, nil, nil, nil)
        }

        enum CodingKeys: String, CodingKey {
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

    /// The one reference to the fields (copy on write: mutated only while uniquely referenced). A
    /// payload travels from the verifier through its cache, its result and the pipeline's
    /// transaction; copying 28 fields, most of them strings, cost a retain and a release per field
    /// and copy, about a hundred of each per verified JWS.
    private final class Box: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    /// A member, read in place and written after copying the fields when another payload shares them.
    public subscript<T>(dynamicMember field: WritableKeyPath<Fields, T>) -> T {
        _read { yield box.fields[keyPath: field] }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            yield &box.fields[keyPath: field]
        }
    }

    /// The product type, or `nil` for an unknown value.
    public var type: ProductType? { ProductType(appleType: box.fields.rawType) }
    /// The environment, or `nil` for an unknown value.
    public var environment: AppStoreEnvironment? { AppStoreEnvironment(rawValue: box.fields.rawEnvironment) }
    /// The app account token as a UUID, or `nil` when absent or not a UUID.
    public var appAccountToken: UUID? { box.fields.rawAppAccountToken.flatMap(UUID.init(uuidString:)) }
    /// The ownership type, or `nil` when absent or unknown.
    public var inAppOwnershipType: InAppOwnershipType? { box.fields.rawInAppOwnershipType.flatMap(InAppOwnershipType.init(rawValue:)) }
    /// The revocation reason, or `nil` when absent or unknown.
    public var revocationReason: RevocationReason? { box.fields.rawRevocationReason.flatMap(RevocationReason.init(rawValue:)) }
    /// The offer type, or `nil` when absent or unknown.
    public var offerType: OfferType? { box.fields.rawOfferType.flatMap(OfferType.init(rawValue:)) }
    /// The transaction reason, or `nil` when absent or unknown.
    public var transactionReason: TransactionReason? { box.fields.rawTransactionReason.flatMap(TransactionReason.init(rawValue:)) }
    /// The offer discount type, or `nil` when absent or unknown.
    public var offerDiscountType: OfferDiscountType? { box.fields.rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
    /// Whether Apple refunded or revoked the transaction (a revocation date is present).
    public var isRevoked: Bool { box.fields.revocationDate != nil }

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
        box = Box(Fields(transactionId: transactionId, originalTransactionId: originalTransactionId, bundleId: bundleId,
                         productId: productId, purchaseDate: purchaseDate, rawType: rawType, rawEnvironment: rawEnvironment))
    }

    public init(from decoder: any Decoder) throws {
        box = Box(try Fields(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try box.fields.encode(to: encoder)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    public func hash(into hasher: inout Hasher) {
        box.fields.hash(into: &hasher)
    }

    /// Builds the model from a verified payload object.
    /// - Throws: ``VerificationError`` (`missing-field`, `invalid-field`, `invalid-date`).
    init(json: JSONObject, dateRange: ClosedRange<Int64>) throws(VerificationError) {
        // Written into the new box: fields filled in a local and then boxed were copied whole.
        box = Box(Fields(transactionId: try json.requiredString("transactionId"),
                         originalTransactionId: try json.requiredString("originalTransactionId"),
                         bundleId: try json.requiredString("bundleId"),
                         productId: try json.requiredString("productId"),
                         purchaseDate: try json.requiredDate("purchaseDate", range: dateRange),
                         rawType: try json.requiredString("type"),
                         rawEnvironment: try json.requiredString("environment")))
        box.fields.webOrderLineItemId = try json.optionalString("webOrderLineItemId")
        box.fields.subscriptionGroupIdentifier = try json.optionalString("subscriptionGroupIdentifier")
        box.fields.originalPurchaseDate = try json.optionalDate("originalPurchaseDate", range: dateRange)
        box.fields.expiresDate = try json.optionalDate("expiresDate", range: dateRange)
        box.fields.quantity = try json.optionalInt32("quantity")
        box.fields.rawAppAccountToken = try json.optionalString("appAccountToken")
        box.fields.rawInAppOwnershipType = try json.optionalString("inAppOwnershipType")
        box.fields.signedDate = try json.optionalDate("signedDate", range: dateRange)
        box.fields.rawRevocationReason = try json.optionalInt32("revocationReason")
        box.fields.revocationDate = try json.optionalDate("revocationDate", range: dateRange)
        box.fields.isUpgraded = try json.optionalBool("isUpgraded")
        box.fields.rawOfferType = try json.optionalInt32("offerType")
        box.fields.offerIdentifier = try json.optionalString("offerIdentifier")
        box.fields.storefront = try json.optionalString("storefront")
        box.fields.storefrontId = try json.optionalString("storefrontId")
        box.fields.rawTransactionReason = try json.optionalString("transactionReason")
        box.fields.currency = try json.optionalString("currency")
        box.fields.price = try json.optionalInt64("price")
        box.fields.rawOfferDiscountType = try json.optionalString("offerDiscountType")
        box.fields.appTransactionId = try json.optionalString("appTransactionId")
        box.fields.offerPeriod = try json.optionalString("offerPeriod")

    }
}
