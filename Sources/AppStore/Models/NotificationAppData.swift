/// App metadata of a notification that concerns the app rather than a purchase (`appData` of
/// `RESCIND_CONSENT`).
///
/// ``signedAppTransactionInfo`` is kept as received and is **not** verified by this version
/// (there is no app transaction model yet); nothing in receiptd grants or revokes from it.
public struct NotificationAppData: Sendable, Hashable, Codable {
    /// The app's App Store id.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// Raw `environment`; see ``environment``.
    public var rawEnvironment: String?
    /// The app transaction JWS, as received (not verified).
    public var signedAppTransactionInfo: String?

    /// The environment, or `nil` when absent or unknown.
    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(rawValue:)) }

    /// Creates empty app data; set members afterwards.
    public init() {}

    /// Builds the model from the `appData` object of a verified payload.
    /// - Throws: ``VerificationError`` (`invalid-field`).
    init(json: JSONObject) throws(VerificationError) {
        appAppleId = try json.optionalInt64("appAppleId")
        bundleId = try json.optionalString("bundleId")
        rawEnvironment = try json.optionalString("environment")
        signedAppTransactionInfo = try json.optionalString("signedAppTransactionInfo")
    }

    private enum CodingKeys: String, CodingKey {
        case appAppleId, bundleId
        case rawEnvironment = "environment"
        case signedAppTransactionInfo
    }
}
