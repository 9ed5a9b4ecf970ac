import Foundation

/// A verified App Store Server Notification V2 (the payload of `signedPayload`).
///
/// Raw + typed pattern: ``rawNotificationType`` and ``rawSubtype`` keep Apple's strings, and
/// ``notificationType`` / ``subtype`` are `nil` for values this version does not know, so a new
/// notification type never breaks decoding (``NotificationEffect`` maps it to `informational`).
///
/// Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and ``appData`` is expected;
/// the app identity (``bundleId``, ``appAppleId``, ``rawEnvironment``) is taken from the first
/// present in that order, as Apple's library does.
///
/// Required members (else `missing-field`): `notificationType`, `notificationUUID`. `signedDate`
/// is optional (2022 notifications lack it; the chain is then checked at the clock's time).
public struct ResponseBodyV2DecodedPayload: Sendable, Hashable, Codable {
    /// Raw `notificationType`; see ``notificationType``.
    public var rawNotificationType: String
    /// Raw `subtype`; see ``subtype``.
    public var rawSubtype: String?
    /// Unique id of the notification (the same id on Apple's retries).
    public var notificationUUID: String
    /// The notification version (`2.0`); absent in some older test data.
    public var version: String?
    /// When the App Store signed the notification.
    public var signedDate: Date?
    /// App metadata and the nested transaction and renewal info.
    public var data: NotificationData?
    /// The result of a mass renewal-date extension (`RENEWAL_EXTENSION` / `SUMMARY`).
    public var summary: NotificationSummary?
    /// The token of an `EXTERNAL_PURCHASE_TOKEN` notification.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// App metadata of a `RESCIND_CONSENT` notification.
    public var appData: NotificationAppData?

    /// The notification type, or `nil` for a type this version does not know.
    public var notificationType: NotificationTypeV2? { NotificationTypeV2(rawValue: rawNotificationType) }
    /// The subtype, or `nil` when absent or unknown.
    public var subtype: Subtype? { rawSubtype.flatMap(Subtype.init(rawValue:)) }

    /// The bundle id of the first present of ``data``, ``summary``, ``externalPurchaseToken``, ``appData``.
    public var bundleId: String? { appIdentity.bundleId }
    /// The App Store app id of the first present of ``data``, ``summary``, ``externalPurchaseToken``, ``appData``.
    public var appAppleId: Int64? { appIdentity.appAppleId }
    /// The environment string of the first present container; derived from the token id for
    /// ``externalPurchaseToken`` (see ``ExternalPurchaseToken/derivedEnvironment``).
    public var rawEnvironment: String? { appIdentity.rawEnvironment }
    /// The typed environment, or `nil` when absent or unknown.
    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(rawValue:)) }

    /// Creates a notification with the required members; set the others afterwards.
    /// - Parameters:
    ///   - rawNotificationType: The type as Apple spells it.
    ///   - notificationUUID: The notification id.
    public init(rawNotificationType: String, notificationUUID: String) {
        self.rawNotificationType = rawNotificationType
        self.notificationUUID = notificationUUID
    }

    /// Builds the model from a verified payload object (nested JWS not yet verified).
    /// - Throws: ``VerificationError`` (`missing-field`, `invalid-field`, `invalid-date`).
    init(json: JSONObject, dateRange: ClosedRange<Int64>) throws(VerificationError) {
        self.init(rawNotificationType: try json.requiredString("notificationType"),
                  notificationUUID: try json.requiredString("notificationUUID"))
        rawSubtype = try json.optionalString("subtype")
        version = try json.optionalString("version")
        signedDate = try json.optionalDate("signedDate", range: dateRange)
        data = try json.optionalNestedObject("data").map { object throws(VerificationError) in
            try NotificationData(json: object)
        }
        summary = try json.optionalNestedObject("summary").map { object throws(VerificationError) in
            try NotificationSummary(json: object)
        }
        externalPurchaseToken = try json.optionalNestedObject("externalPurchaseToken").map { object throws(VerificationError) in
            try ExternalPurchaseToken(json: object, dateRange: dateRange)
        }
        appData = try json.optionalNestedObject("appData").map { object throws(VerificationError) in
            try NotificationAppData(json: object)
        }
    }

    /// Bundle id, app id and environment of the first present container (Apple's precedence).
    var appIdentity: (bundleId: String?, appAppleId: Int64?, rawEnvironment: String?) {
        if let data { return (data.bundleId, data.appAppleId, data.rawEnvironment) }
        if let summary { return (summary.bundleId, summary.appAppleId, summary.rawEnvironment) }
        if let token = externalPurchaseToken {
            return (token.bundleId, token.appAppleId, token.derivedEnvironment.rawValue)
        }
        if let appData { return (appData.bundleId, appData.appAppleId, appData.rawEnvironment) }
        return (nil, nil, nil)
    }

    private enum CodingKeys: String, CodingKey {
        case rawNotificationType = "notificationType"
        case rawSubtype = "subtype"
        case notificationUUID, version, signedDate, data, summary, externalPurchaseToken, appData
    }
}
