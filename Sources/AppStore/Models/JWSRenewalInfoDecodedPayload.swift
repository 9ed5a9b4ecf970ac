import Foundation

/// Verified auto-renewable subscription renewal information (`signedRenewalInfo` payload).
///
/// Raw + typed pattern as in ``JWSTransactionDecodedPayload``. Only `environment` is required
/// (as Apple's library, which accepts `{"environment":"Sandbox","signedDate":…}`); renewal infos
/// carry no `bundleId`, so they bind to the app only through the chain, the environment and the
/// `originalTransactionId` lookup.
public struct JWSRenewalInfoDecodedPayload: Sendable, Hashable, Codable {
    /// Raw `expirationIntent`; see ``expirationIntent``.
    public var rawExpirationIntent: Int32?
    /// Original transaction id of the subscription.
    public var originalTransactionId: String?
    /// Product that renews at the next billing period.
    public var autoRenewProductId: String?
    /// Current product.
    public var productId: String?
    /// Raw `autoRenewStatus`; see ``autoRenewStatus``.
    public var rawAutoRenewStatus: Int32?
    /// Whether Apple is retrying billing.
    public var isInBillingRetryPeriod: Bool?
    /// Raw `priceIncreaseStatus`; see ``priceIncreaseStatus``.
    public var rawPriceIncreaseStatus: Int32?
    /// End of the billing grace period.
    public var gracePeriodExpiresDate: Date?
    /// Raw `offerType`; see ``offerType``.
    public var rawOfferType: Int32?
    /// Offer identifier.
    public var offerIdentifier: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// Raw `environment`; see ``environment``.
    public var rawEnvironment: String
    /// Start of the most recent uninterrupted subscription period.
    public var recentSubscriptionStartDate: Date?
    /// Next renewal date.
    public var renewalDate: Date?
    /// ISO 4217 currency code of ``renewalPrice``.
    public var currency: String?
    /// Renewal price in milliunits of ``currency``.
    public var renewalPrice: Int64?
    /// Raw `offerDiscountType`; see ``offerDiscountType``.
    public var rawOfferDiscountType: String?
    /// Win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?
    /// App transaction id.
    public var appTransactionId: String?
    /// ISO 8601 duration of the offer.
    public var offerPeriod: String?
    /// Raw `appAccountToken`; see ``appAccountToken``.
    public var rawAppAccountToken: String?

    /// The environment, or `nil` for an unknown value.
    public var environment: AppStoreEnvironment? { AppStoreEnvironment(rawValue: rawEnvironment) }
    /// The expiration intent, or `nil` when absent or unknown.
    public var expirationIntent: ExpirationIntent? { rawExpirationIntent.flatMap(ExpirationIntent.init(rawValue:)) }
    /// The auto-renew status, or `nil` when absent or unknown.
    public var autoRenewStatus: AutoRenewStatus? { rawAutoRenewStatus.flatMap(AutoRenewStatus.init(rawValue:)) }
    /// The price increase status, or `nil` when absent or unknown.
    public var priceIncreaseStatus: PriceIncreaseStatus? { rawPriceIncreaseStatus.flatMap(PriceIncreaseStatus.init(rawValue:)) }
    /// The offer type, or `nil` when absent or unknown.
    public var offerType: OfferType? { rawOfferType.flatMap(OfferType.init(rawValue:)) }
    /// The offer discount type, or `nil` when absent or unknown.
    public var offerDiscountType: OfferDiscountType? { rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
    /// The app account token as a UUID, or `nil` when absent or not a UUID.
    public var appAccountToken: UUID? { rawAppAccountToken.flatMap(UUID.init(uuidString:)) }

    /// Creates a payload with the required member; set optional members afterwards.
    /// - Parameter rawEnvironment: Environment as Apple spells it.
    public init(rawEnvironment: String) {
        self.rawEnvironment = rawEnvironment
    }

    /// Builds the model from a verified payload object.
    /// - Throws: ``VerificationError`` (`missing-field`, `invalid-field`, `invalid-date`).
    init(json: JSONObject, dateRange: ClosedRange<Int64>) throws(VerificationError) {
        self.init(rawEnvironment: try json.requiredString("environment"))
        rawExpirationIntent = try json.optionalInt32("expirationIntent")
        originalTransactionId = try json.optionalString("originalTransactionId")
        autoRenewProductId = try json.optionalString("autoRenewProductId")
        productId = try json.optionalString("productId")
        rawAutoRenewStatus = try json.optionalInt32("autoRenewStatus")
        isInBillingRetryPeriod = try json.optionalBool("isInBillingRetryPeriod")
        rawPriceIncreaseStatus = try json.optionalInt32("priceIncreaseStatus")
        gracePeriodExpiresDate = try json.optionalDate("gracePeriodExpiresDate", range: dateRange)
        rawOfferType = try json.optionalInt32("offerType")
        offerIdentifier = try json.optionalString("offerIdentifier")
        signedDate = try json.optionalDate("signedDate", range: dateRange)
        recentSubscriptionStartDate = try json.optionalDate("recentSubscriptionStartDate", range: dateRange)
        renewalDate = try json.optionalDate("renewalDate", range: dateRange)
        currency = try json.optionalString("currency")
        renewalPrice = try json.optionalInt64("renewalPrice")
        rawOfferDiscountType = try json.optionalString("offerDiscountType")
        eligibleWinBackOfferIds = try json.optionalStringArray("eligibleWinBackOfferIds")
        appTransactionId = try json.optionalString("appTransactionId")
        offerPeriod = try json.optionalString("offerPeriod")
        rawAppAccountToken = try json.optionalString("appAccountToken")
    }

    private enum CodingKeys: String, CodingKey {
        case rawExpirationIntent = "expirationIntent"
        case originalTransactionId, autoRenewProductId, productId
        case rawAutoRenewStatus = "autoRenewStatus"
        case isInBillingRetryPeriod
        case rawPriceIncreaseStatus = "priceIncreaseStatus"
        case gracePeriodExpiresDate
        case rawOfferType = "offerType"
        case offerIdentifier, signedDate
        case rawEnvironment = "environment"
        case recentSubscriptionStartDate, renewalDate, currency, renewalPrice
        case rawOfferDiscountType = "offerDiscountType"
        case eligibleWinBackOfferIds, appTransactionId, offerPeriod
        case rawAppAccountToken = "appAccountToken"
    }
}
