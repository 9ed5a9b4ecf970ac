import Foundation

/// A subscription's renewal info as Apple signs it into `signedRenewalInfo` (the fields of
/// `JWSRenewalInfoDecodedPayload` a lifecycle needs; dates as integer milliseconds). Apple nests
/// one in every notification about a subscription: it says what happens at the period's end,
/// which the transaction alone cannot (auto-renew off, a pending downgrade, billing trouble).
struct SampleRenewalInfo: Sendable {
    var originalTransactionId: String
    var productId: String
    /// The product that renews next (differs from `productId` while a downgrade is pending).
    var autoRenewProductId: String
    var autoRenewStatus = 1
    /// 1 cancelled, 2 billing error, 3 price increase declined, 4 product unavailable, 5 other.
    var expirationIntent: Int?
    var isInBillingRetryPeriod: Bool?
    var gracePeriodExpiresDate: Date?
    var priceIncreaseStatus: Int?
    var recentSubscriptionStartDate: Date
    var renewalDate: Date?
    var environment = "Sandbox"
    var signedDate: Date

    /// The renewal info of `transaction`'s subscription as of `signed`, renewing the same product.
    init(of transaction: SampleTransaction, signed: Date) {
        originalTransactionId = transaction.originalTransactionId
        productId = transaction.productId
        autoRenewProductId = transaction.productId
        recentSubscriptionStartDate = transaction.purchaseDate
        renewalDate = transaction.expiresDate
        environment = transaction.environment
        signedDate = signed
    }

    /// The JSON payload bytes to sign.
    func payload() -> [UInt8] {
        var json = JSONText()
        json.add("originalTransactionId", originalTransactionId)
        json.add("autoRenewProductId", autoRenewProductId)
        json.add("productId", productId)
        json.add("autoRenewStatus", autoRenewStatus)
        if let expirationIntent { json.add("expirationIntent", expirationIntent) }
        if let isInBillingRetryPeriod { json.add("isInBillingRetryPeriod", isInBillingRetryPeriod) }
        if let gracePeriodExpiresDate { json.add("gracePeriodExpiresDate", gracePeriodExpiresDate.milliseconds) }
        if let priceIncreaseStatus { json.add("priceIncreaseStatus", priceIncreaseStatus) }
        json.add("recentSubscriptionStartDate", recentSubscriptionStartDate.milliseconds)
        if let renewalDate { json.add("renewalDate", renewalDate.milliseconds) }
        json.add("signedDate", signedDate.milliseconds)
        json.add("environment", environment)
        return json.bytes
    }
}
