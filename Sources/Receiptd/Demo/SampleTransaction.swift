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
    var quantity = 1
    var environment = "Sandbox"
    var signedDate: Date
    var appAccountToken: String?

    /// The JSON payload bytes to sign.
    func payload() -> [UInt8] {
        func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        var json = JSONText()
        json.add("transactionId", transactionId)
        json.add("originalTransactionId", originalTransactionId)
        json.add("webOrderLineItemId", String((Int64(transactionId) ?? 0) + 7_000_000))
        json.add("bundleId", bundleId)
        json.add("productId", productId)
        json.add("purchaseDate", ms(purchaseDate))
        json.add("originalPurchaseDate", ms(purchaseDate))
        if let expiresDate { json.add("expiresDate", ms(expiresDate)) }
        json.add("quantity", quantity)
        json.add("type", type)
        if let appAccountToken { json.add("appAccountToken", appAccountToken) }
        json.add("inAppOwnershipType", "PURCHASED")
        json.add("signedDate", ms(signedDate))
        if let revocationDate {
            json.add("revocationReason", 0)
            json.add("revocationDate", ms(revocationDate))
        }
        json.add("environment", environment)
        json.add("transactionReason", transactionId == originalTransactionId ? "PURCHASE" : "RENEWAL")
        json.add("storefront", "USA")
        json.add("storefrontId", "143441")
        json.add("price", 4990)
        json.add("currency", "USD")
        return json.bytes
    }
}
