import AppStore
import Foundation

/// Apple's documented JSON shapes for the lifecycle tests: a `JWSTransactionDecodedPayload`, a
/// `JWSRenewalInfoDecodedPayload` and a notification's `ResponseBodyV2DecodedPayload`, dates as
/// milliseconds since 1970, as Apple signs them.
enum AppleShapes {
    /// 2026-06-01T00:00:00Z plus `days`.
    static func day(_ days: Double) -> Date { Date(timeIntervalSince1970: 1_780_272_000 + days * 86_400) }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// A transaction payload.
    struct Transaction {
        var id: String
        var original: String
        var product: String
        var type: ProductType
        var purchase: Date
        var expires: Date?
        var signed: Date
        var revoked: Date?
        var upgraded = false
        var quantity = 1
        var ownership = "PURCHASED"
        var token: String?
        var environment = "Production"
        var bundleId = "com.demo.game"

        func json() -> [String: Any] {
            var object: [String: Any] = [
                "transactionId": id, "originalTransactionId": original, "webOrderLineItemId": id + "7",
                "bundleId": bundleId, "productId": product, "purchaseDate": ms(purchase), "originalPurchaseDate": ms(purchase),
                "quantity": quantity, "type": type.appleType, "inAppOwnershipType": ownership, "signedDate": ms(signed),
                "environment": environment, "transactionReason": id == original ? "PURCHASE" : "RENEWAL",
                "storefront": "USA", "storefrontId": "143441", "price": 4990, "currency": "USD",
            ]
            if let expires { object["expiresDate"] = ms(expires) }
            if let revoked {
                object["revocationDate"] = ms(revoked)
                object["revocationReason"] = 0
            }
            if upgraded { object["isUpgraded"] = true }
            if let token { object["appAccountToken"] = token }
            return object
        }
    }

    /// A renewal-info payload.
    struct Renewal {
        var original: String
        var product: String
        var autoRenewProduct: String?
        var autoRenew = true
        var expirationIntent: Int?
        var gracePeriodExpires: Date?
        var billingRetry = false
        var signed: Date
        var environment = "Production"

        func json() -> [String: Any] {
            var object: [String: Any] = [
                "originalTransactionId": original, "productId": product, "autoRenewProductId": autoRenewProduct ?? product,
                "autoRenewStatus": autoRenew ? 1 : 0, "isInBillingRetryPeriod": billingRetry, "signedDate": ms(signed),
                "environment": environment, "recentSubscriptionStartDate": ms(day(0)),
            ]
            if let expirationIntent { object["expirationIntent"] = expirationIntent }
            if let gracePeriodExpires { object["gracePeriodExpiresDate"] = ms(gracePeriodExpires) }
            return object
        }
    }

    static func bytes(_ object: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// A notification's payload with its nested JWS already signed.
    static func notification(type: String, subtype: String?, signed: Date, uuid: String,
                             transaction: String?, renewal: String?, environment: String = "Production") -> [String: Any] {
        var data: [String: Any] = ["bundleId": "com.demo.game", "bundleVersion": "1", "environment": environment,
                                   "appAppleId": 1_234_567_890]
        if let transaction { data["signedTransactionInfo"] = transaction }
        if let renewal { data["signedRenewalInfo"] = renewal }
        var object: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "version": "2.0",
                                     "signedDate": ms(signed), "data": data]
        if let subtype { object["subtype"] = subtype }
        return object
    }
}
