/// The App Store Server Notification (V2) a verified transaction arrived in: its type, subtype
/// and id as Apple sent them (raw strings, so new Apple values pass through), plus the effect
/// receiptd derived (`transactionUpdate`, `revoke`, `reinstate`, `expire`, `gracePeriod`,
/// `billingRetry`, `renewalPreferenceChanged`, `renewalStatusChanged`, `informational`).
public struct NotificationSource: Sendable, Codable, Equatable {
    public var notificationType: String
    public var subtype: String?
    public var notificationUUID: String
    public var effect: String

    public init(notificationType: String, subtype: String?, notificationUUID: String, effect: String) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.effect = effect
    }
}
