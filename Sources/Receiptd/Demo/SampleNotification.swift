import Foundation

/// An App Store Server Notification V2 as Apple signs it into the `signedPayload` it POSTs
/// (`responseBodyV2DecodedPayload`): type, subtype, id, `signedDate`, and `data` with the app's
/// identity and the transaction and renewal info, each its own JWS nested as a string.
struct SampleNotification: Sendable {
    var notificationType: String
    var subtype: String?
    var notificationUUID: String
    var signedDate: Date
    var bundleId: String
    var environment = "Sandbox"
    /// The nested `signedTransactionInfo` JWS (absent in `TEST`).
    var signedTransactionInfo: String?
    /// The nested `signedRenewalInfo` JWS (subscriptions).
    var signedRenewalInfo: String?
    /// Apple's subscription status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    var status: Int?
    /// Why the customer asked for a refund (`CONSUMPTION_REQUEST`).
    var consumptionRequestReason: String?

    /// The JSON payload bytes to sign.
    func payload() -> [UInt8] {
        var data = JSONText()
        data.add("bundleId", bundleId)
        data.add("bundleVersion", "1")
        data.add("environment", environment)
        if let signedTransactionInfo { data.add("signedTransactionInfo", signedTransactionInfo) }
        if let signedRenewalInfo { data.add("signedRenewalInfo", signedRenewalInfo) }
        if let status { data.add("status", status) }
        if let consumptionRequestReason { data.add("consumptionRequestReason", consumptionRequestReason) }
        var json = JSONText()
        json.add("notificationType", notificationType)
        if let subtype { json.add("subtype", subtype) }
        json.add("notificationUUID", notificationUUID)
        json.add("version", "2.0")
        json.add("signedDate", signedDate.milliseconds)
        json.add("data", object: data)
        return json.bytes
    }
}
