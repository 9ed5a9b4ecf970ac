import Foundation
import AppStore

/// Synthetic payloads and submissions for seeds, shaped like the test suites' (`Harness`,
/// `NotificationJSON`, the pipeline's `Fixtures.submission`), plus every JWS the fixtures hold.
public enum FuzzSamples {
    /// 2025-01-01T00:00:00Z in milliseconds, inside every test PKI's validity.
    public static let signedDateMilliseconds: Int64 = 1_735_689_600_000

    /// A transaction payload with every member Apple sends (bundle `com.example.cli`, Sandbox).
    public static let transactionJSON = """
        {"transactionId":"2000000000000002","originalTransactionId":"2000000000000001",\
        "webOrderLineItemId":"2000000000000003","bundleId":"com.example.cli","productId":"com.example.cli.pro.monthly",\
        "subscriptionGroupIdentifier":"21000000","purchaseDate":1735689000000,"originalPurchaseDate":1735600000000,\
        "expiresDate":1738367400000,"quantity":1,"type":"Auto-Renewable Subscription",\
        "appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","inAppOwnershipType":"PURCHASED",\
        "signedDate":\(signedDateMilliseconds),"environment":"Sandbox","transactionReason":"PURCHASE","storefront":"USA",\
        "storefrontId":"143441","price":9990,"currency":"USD","revocationDate":1735689500000,"revocationReason":1,\
        "offerType":1,"offerIdentifier":"intro","offerDiscountType":"FREE_TRIAL","appTransactionId":"704897469903383919"}
        """

    /// A renewal info payload of the same subscription.
    public static let renewalJSON = """
        {"originalTransactionId":"2000000000000001","autoRenewProductId":"com.example.cli.pro.yearly",\
        "productId":"com.example.cli.pro.monthly","autoRenewStatus":1,"signedDate":\(signedDateMilliseconds),\
        "environment":"Sandbox","renewalDate":1738367400000,"expirationIntent":1,"isInBillingRetryPeriod":false,\
        "gracePeriodExpiresDate":1738367400000,"priceIncreaseStatus":0,"recentSubscriptionStartDate":1735600000000}
        """

    /// A notification payload of `type`, whose `data` carries `signedTransactionInfo` when given.
    public static func notificationJSON(type: String, subtype: String? = nil, signedTransactionInfo: String?) -> String {
        var data = #"{"environment":"Sandbox","bundleId":"com.example.cli","bundleVersion":"42","status":1"#
        if let signedTransactionInfo { data += #","signedTransactionInfo":""# + signedTransactionInfo + "\"" }
        data += "}"
        let subtypeMember = subtype.map { #""subtype":""# + $0 + #"","# } ?? ""
        return #"{"notificationType":""# + type + #"","# + subtypeMember
            + #""notificationUUID":"5b0f7a4e-9c1d-4f7a-8c55-0f2a3c4d5e6f","version":"2.0","signedDate":"#
            + "\(signedDateMilliseconds)" + #","data":"# + data + "}"
    }

    /// Notification payloads whose nested transaction is `cli/valid.jws` (trusted by the fuzz
    /// verifier, so the nested verification and binding checks run).
    public static var notificationJSONs: [(name: String, json: String)] {
        [
            ("notification-refund", notificationJSON(type: "REFUND", signedTransactionInfo: FuzzFixtures.cliValidJWS)),
            ("notification-one-time-charge", notificationJSON(type: "ONE_TIME_CHARGE", signedTransactionInfo: FuzzFixtures.cliValidJWS)),
            ("notification-did-renew", notificationJSON(type: "DID_RENEW", signedTransactionInfo: FuzzFixtures.cliValidJWS)),
            ("notification-test", notificationJSON(type: "TEST", signedTransactionInfo: nil)),
        ]
    }

    /// Every JWS the fixtures hold (CLI, Apple, Apple's Python tests), plus transactions, renewal
    /// infos and notifications signed now by a fresh test PKI (not trusted by later runs: they
    /// reach `untrusted-root`, their decoded payloads seed the re-signing target).
    public static var allJWS: [(name: String, text: String)] {
        var all = FuzzFixtures.cliJWS.map { ("cli-\($0.name)", $0.text) }
            + FuzzFixtures.appleJWS.map { ("apple-\($0.name)", $0.text) }
            + FuzzFixtures.peerJWS.map { ("peer-\($0.name)", $0.text) }
        let signer = FuzzVerifier.pki.signer
        for (name, json) in [("testpki-transaction", transactionJSON), ("testpki-renewal", renewalJSON)]
            + notificationJSONs.map({ ("testpki-\($0.name)", $0.json) }) {
            if let jws = try? signer.sign(payloadJSON: json) { all.append((name, jws)) }
        }
        return all
    }

    /// Decoded (header, payload) JSON of a compact JWS, when its segments decode.
    public static func decodedJSON(_ jws: String) -> (header: [UInt8], payload: [UInt8])? {
        let segments = FuzzFixtures.segments(jws)
        guard segments.count == 3, let header = FuzzFixtures.decodeSegment(segments[0]),
              let payload = FuzzFixtures.decodeSegment(segments[1]) else { return nil }
        return (header, payload)
    }

    /// A `receipt-submitted/v1` document with `overrides` applied (`nil` removes a member).
    /// Values are JSON text, so seeds can also carry wrong types.
    public static func submission(_ overrides: [String: String?] = [:]) -> String {
        var members: [(String, String)] = [
            ("schema", #""receipt-submitted/v1""#), ("submissionId", #""sub-1""#), ("userId", #""user-1""#),
            ("bundleId", #""com.example.cli""#), ("kind", #""signedTransaction""#),
            ("payload", quoted(FuzzFixtures.cliValidJWS)), ("submittedAt", #""2026-11-30T05:59:00Z""#),
        ]
        for (key, value) in overrides.sorted(by: { $0.key < $1.key }) {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if let value { members[index].1 = value } else { members.remove(at: index) }
            } else if let value {
                members.append((key, value))
            }
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A JSON string literal (escapes `"`, `\`, and control characters).
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
