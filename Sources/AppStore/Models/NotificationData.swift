import Foundation

/// The app metadata and signed transaction and renewal information of a notification (`data`).
///
/// Raw + typed like ``JWSTransactionDecodedPayload``. The nested JWS stay available as received
/// (``signedTransactionInfo``, ``signedRenewalInfo``); after
/// ``SignedDataVerifier/verifyAndDecodeNotification(_:)`` they are also verified and decoded
/// (``transactionInfo``, ``renewalInfo``). Every member is optional, as in Apple's payloads
/// (2022 notifications carry no `appAppleId`; a `TEST` carries no nested JWS).
public struct NotificationData: Sendable, Hashable, Codable {
    /// Raw `environment`; see ``environment``.
    public var rawEnvironment: String?
    /// The app's App Store id (absent in older notifications).
    public var appAppleId: Int64?
    /// The app's bundle identifier (exact case).
    public var bundleId: String?
    /// The build version of the app.
    public var bundleVersion: String?
    /// The transaction JWS, as received.
    public var signedTransactionInfo: String?
    /// The renewal info JWS, as received.
    public var signedRenewalInfo: String?
    /// Raw `status`; see ``status``.
    public var rawStatus: Int32?
    /// Raw `consumptionRequestReason`; see ``consumptionRequestReason``.
    public var rawConsumptionRequestReason: String?
    /// ``signedTransactionInfo`` verified (same chain policy, at its own `signedDate`) and decoded.
    /// Set by the verifier; `nil` when absent or not yet verified.
    public var transactionInfo: JWSTransactionDecodedPayload?
    /// ``signedRenewalInfo`` verified and decoded. Set by the verifier; `nil` when absent.
    public var renewalInfo: JWSRenewalInfoDecodedPayload?

    /// The environment, or `nil` when absent or unknown.
    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(rawValue:)) }
    /// The subscription status, or `nil` when absent or unknown.
    public var status: Status? { rawStatus.flatMap(Status.init(rawValue:)) }
    /// The refund request reason, or `nil` when absent or unknown.
    public var consumptionRequestReason: ConsumptionRequestReason? {
        rawConsumptionRequestReason.flatMap(ConsumptionRequestReason.init(rawValue:))
    }

    /// Creates empty data; set members afterwards.
    public init() {}

    /// Builds the model from the `data` object of a verified payload (nested JWS not yet verified).
    /// - Throws: ``VerificationError`` (`invalid-field`).
    init(json: JSONObject) throws(VerificationError) {
        rawEnvironment = try json.optionalString("environment")
        appAppleId = try json.optionalInt64("appAppleId")
        bundleId = try json.optionalString("bundleId")
        bundleVersion = try json.optionalString("bundleVersion")
        signedTransactionInfo = try json.optionalString("signedTransactionInfo")
        signedRenewalInfo = try json.optionalString("signedRenewalInfo")
        rawStatus = try json.optionalInt32("status")
        rawConsumptionRequestReason = try json.optionalString("consumptionRequestReason")
    }

    private enum CodingKeys: String, CodingKey {
        case rawEnvironment = "environment"
        case appAppleId, bundleId, bundleVersion, signedTransactionInfo, signedRenewalInfo
        case rawStatus = "status"
        case rawConsumptionRequestReason = "consumptionRequestReason"
        case transactionInfo, renewalInfo
    }
}
