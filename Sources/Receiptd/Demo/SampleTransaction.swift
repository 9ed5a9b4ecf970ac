import Foundation

/// A StoreKit 2 transaction payload as Apple signs it, built for the demo, the benchmarks and the
/// chaos runs. Field names and value formats follow Apple's `JWSTransactionDecodedPayload`
/// (dates as integer milliseconds since 1970).
struct SampleTransaction: Sendable {
    var transactionId: String
    var originalTransactionId: String
    var bundleId: String
    var productId: String
    var type: String
    var purchaseDate: Date
    var expiresDate: Date?
    var revocationDate: Date?
    /// Apple's `revocationReason` when revoked (0 other, 1 an issue in the app).
    var revocationReason = 0
    var quantity = 1
    var environment = "Sandbox"
    var signedDate: Date
    var appAccountToken: String?
    /// Set on the period of a product the customer upgraded away from.
    var isUpgraded = false
    /// `PURCHASED`, or `FAMILY_SHARED` for a family member's copy of someone else's purchase.
    var ownershipType = "PURCHASED"
    /// `PURCHASE` or `RENEWAL`; by default from whether this is the purchase's first transaction.
    var transactionReason: String?

    /// The JSON payload bytes to sign.
    func payload() -> [UInt8] {
        var json = JSONText()
        json.add("transactionId", transactionId)
        json.add("originalTransactionId", originalTransactionId)
        json.add("webOrderLineItemId", String((Int64(transactionId) ?? 0) + 7_000_000))
        json.add("bundleId", bundleId)
        json.add("productId", productId)
        json.add("purchaseDate", purchaseDate.milliseconds)
        json.add("originalPurchaseDate", purchaseDate.milliseconds)
        if let expiresDate { json.add("expiresDate", expiresDate.milliseconds) }
        json.add("quantity", quantity)
        json.add("type", type)
        if let appAccountToken { json.add("appAccountToken", appAccountToken) }
        json.add("inAppOwnershipType", ownershipType)
        json.add("signedDate", signedDate.milliseconds)
        if let revocationDate {
            json.add("revocationReason", revocationReason)
            json.add("revocationDate", revocationDate.milliseconds)
        }
        if isUpgraded { json.add("isUpgraded", true) }
        json.add("environment", environment)
        json.add("transactionReason", transactionReason ?? (transactionId == originalTransactionId ? "PURCHASE" : "RENEWAL"))
        json.add("storefront", "USA")
        json.add("storefrontId", "143441")
        json.add("price", 4990)
        json.add("currency", "USD")
        return json.bytes
    }
}

extension Date {
    /// Milliseconds since 1970, rounded: how Apple's payloads and receiptd's contracts carry dates.
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
