import Foundation

/// The App Store Server Notification (V2) a verified transaction arrived in: its type, subtype
/// and id as Apple sent them (raw strings, so new Apple values pass through), the effect receiptd
/// derived (`transactionUpdate`, `revoke`, `reinstate`, `expire`, `gracePeriod`, `billingRetry`,
/// `renewalPreferenceChanged`, `renewalStatusChanged`, `informational`), when Apple signed it, and
/// the verified renewal info's fields the subscription lifecycle needs (`renewal`).
///
/// Optional members are spelled `Optional<T>`, as in ``VerifiedTransaction``, whose documentation
/// says why.
public struct NotificationSource: Sendable, Codable, Equatable {
    public var notificationType: String
    public var subtype: Optional<String>
    public var notificationUUID: String
    public var effect: String
    /// When Apple signed the notification (orders status changes of one period).
    public var signedDate: Optional<Date>
    /// The nested renewal info's lifecycle fields, when the notification carried one.
    public var renewal: Optional<RenewalSnapshot>

    public init(notificationType: String, subtype: String?, notificationUUID: String, effect: String,
                signedDate: Date? = nil, renewal: RenewalSnapshot? = nil) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.effect = effect
        self.signedDate = signedDate
        self.renewal = renewal
    }

    private enum CodingKeys: String, CodingKey {
        case notificationType, subtype, notificationUUID, effect, signedDate, renewal
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        notificationType = try c.decode(String.self, forKey: .notificationType)
        subtype = try c.decodeIfPresent(String.self, forKey: .subtype)
        notificationUUID = try c.decode(String.self, forKey: .notificationUUID)
        effect = try c.decode(String.self, forKey: .effect)
        signedDate = try c.decodeTimestampIfPresent(forKey: .signedDate)
        renewal = try c.decodeIfPresent(RenewalSnapshot.self, forKey: .renewal)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(notificationType, forKey: .notificationType)
        try c.encode(subtype, forKey: .subtype)
        try c.encode(notificationUUID, forKey: .notificationUUID)
        try c.encode(effect, forKey: .effect)
        try c.encodeTimestamp(signedDate, forKey: .signedDate)
        try c.encode(renewal, forKey: .renewal)
    }
}

/// What a verified `signedRenewalInfo` says about a subscription's future, reduced to what fulfil
/// keeps as state: auto-renew on/off, the product that renews next, Apple's expiration intent and
/// the grace period's end.
public struct RenewalSnapshot: Sendable, Codable, Equatable {
    /// `autoRenewStatus == 1`.
    public var autoRenew: Optional<Bool>
    /// The product that renews at the next period (differs from the current one for a pending
    /// downgrade or crossgrade).
    public var autoRenewProductId: Optional<String>
    /// Apple's raw `expirationIntent` (1 cancelled, 2 billing error, 3 price increase declined,
    /// 4 product not available, 5 other).
    public var expirationIntent: Optional<Int>
    /// End of the billing grace period.
    public var gracePeriodExpiresDate: Optional<Date>
    /// Whether Apple is retrying billing.
    public var isInBillingRetryPeriod: Optional<Bool>

    public init(autoRenew: Bool? = nil, autoRenewProductId: String? = nil, expirationIntent: Int? = nil,
                gracePeriodExpiresDate: Date? = nil, isInBillingRetryPeriod: Bool? = nil) {
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
    }

    private enum CodingKeys: String, CodingKey {
        case autoRenew, autoRenewProductId, expirationIntent, gracePeriodExpiresDate, isInBillingRetryPeriod
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        autoRenew = try c.decodeIfPresent(Bool.self, forKey: .autoRenew)
        autoRenewProductId = try c.decodeIfPresent(String.self, forKey: .autoRenewProductId)
        expirationIntent = try c.decodeIfPresent(Int.self, forKey: .expirationIntent)
        gracePeriodExpiresDate = try c.decodeTimestampIfPresent(forKey: .gracePeriodExpiresDate)
        isInBillingRetryPeriod = try c.decodeIfPresent(Bool.self, forKey: .isInBillingRetryPeriod)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(autoRenew, forKey: .autoRenew)
        try c.encode(autoRenewProductId, forKey: .autoRenewProductId)
        try c.encode(expirationIntent, forKey: .expirationIntent)
        try c.encodeTimestamp(gracePeriodExpiresDate, forKey: .gracePeriodExpiresDate)
        try c.encode(isInBillingRetryPeriod, forKey: .isInBillingRetryPeriod)
    }
}
