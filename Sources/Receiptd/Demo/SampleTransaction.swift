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
        var object: [String: Any] = [
            "transactionId": transactionId,
            "originalTransactionId": originalTransactionId,
            "webOrderLineItemId": String(Int64(transactionId).map { $0 + 7_000_000 } ?? 0),
            "bundleId": bundleId,
            "productId": productId,
            "purchaseDate": ms(purchaseDate),
            "originalPurchaseDate": ms(purchaseDate),
            "quantity": quantity,
            "type": type,
            "inAppOwnershipType": "PURCHASED",
            "signedDate": ms(signedDate),
            "environment": environment,
            "transactionReason": transactionId == originalTransactionId ? "PURCHASE" : "RENEWAL",
            "storefront": "USA",
            "storefrontId": "143441",
            "price": 4990,
            "currency": "USD",
        ]
        if let expiresDate { object["expiresDate"] = ms(expiresDate) }
        if let revocationDate {
            object["revocationDate"] = ms(revocationDate)
            object["revocationReason"] = 0
        }
        if let appAccountToken { object["appAccountToken"] = appAccountToken }
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}
