import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Builders for synthetic App Store Server Notifications V2, signed with a ``Harness``'s test PKI.
/// Values are JSON text (strings quoted), so tests can also write wrong JSON types.
enum NotificationJSON {
    static let uuid = "5b0f7a4e-9c1d-4f7a-8c55-0f2a3c4d5e6f"

    /// `{"k":v,…}` from JSON-text values, in order, skipping `nil` values.
    static func object(_ members: [(String, String?)]) -> String {
        "{" + members.compactMap { key, value in value.map { "\"\(key)\":\($0)" } }.joined(separator: ",") + "}"
    }

    static func quoted(_ string: String?) -> String? { string.map { "\"\($0)\"" } }

    /// A renewal info payload matching ``Harness/transactionJSON(_:)``'s subscription.
    static func renewalJSON(_ overrides: [String: String?] = [:]) -> String {
        var members: [(String, String?)] = [
            ("originalTransactionId", "\"2000000000000001\""),
            ("autoRenewProductId", "\"com.example.app.pro.yearly\""),
            ("productId", "\"com.example.app.pro.monthly\""),
            ("autoRenewStatus", "1"),
            ("signedDate", "\(TestClock.insideMilliseconds)"),
            ("environment", "\"Sandbox\""),
            ("renewalDate", "1738367400000"),
        ]
        for (key, value) in overrides {
            if let index = members.firstIndex(where: { $0.0 == key }) { members[index].1 = value } else { members.append((key, value)) }
        }
        return object(members)
    }

    /// A `data` object. `transaction` / `renewal` are nested compact JWS.
    static func data(bundleId: String? = "com.example.app", environment: String? = "Sandbox", appAppleId: Int64? = nil,
                     transaction: String? = nil, renewal: String? = nil, status: String? = "1",
                     extra: [(String, String?)] = []) -> String {
        object([("environment", quoted(environment)), ("appAppleId", appAppleId.map(String.init)),
                ("bundleId", quoted(bundleId)), ("bundleVersion", "\"42\""),
                ("signedTransactionInfo", quoted(transaction)), ("signedRenewalInfo", quoted(renewal)),
                ("status", status)] + extra)
    }

    /// A notification payload; `containers` are extra members such as `("data", data(...))`.
    static func notification(type: String, subtype: String? = nil, signedDate: Int64? = TestClock.insideMilliseconds,
                             containers: [(String, String?)]) -> String {
        object([("notificationType", quoted(type)), ("subtype", quoted(subtype)), ("notificationUUID", quoted(uuid)),
                ("version", "\"2.0\""), ("signedDate", signedDate.map { String($0) })] + containers)
    }
}

extension Harness {
    /// A signed transaction and renewal info of the same subscription.
    func signNested(transaction: [String: String?] = [:], renewal: [String: String?] = [:]) throws -> (String, String) {
        (try signTransaction(transaction), try pki.signer.sign(payloadJSON: NotificationJSON.renewalJSON(renewal)))
    }

    /// A signed notification whose `data` carries a genuine nested transaction and renewal info.
    func signNotification(type: String = "DID_RENEW", subtype: String? = nil,
                          transaction: [String: String?] = [:], renewal: [String: String?] = [:]) throws -> String {
        let (signedTransaction, signedRenewal) = try signNested(transaction: transaction, renewal: renewal)
        return try pki.signer.sign(payloadJSON: NotificationJSON.notification(
            type: type, subtype: subtype,
            containers: [("data", NotificationJSON.data(transaction: signedTransaction, renewal: signedRenewal))]))
    }

    /// Signs a notification payload given as JSON text.
    func sign(notificationJSON: String) throws -> String {
        try pki.signer.sign(payloadJSON: notificationJSON)
    }
}
