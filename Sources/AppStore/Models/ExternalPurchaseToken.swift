import Foundation

/// An external purchase token (`externalPurchaseToken` of an `EXTERNAL_PURCHASE_TOKEN`
/// notification). It carries no `environment`: as in Apple's library, a token whose
/// ``externalPurchaseId`` starts with `SANDBOX` is Sandbox, any other is Production
/// (``derivedEnvironment``).
public struct ExternalPurchaseToken: Sendable, Hashable, Codable {
    /// Unique id of the token.
    public var externalPurchaseId: String?
    /// When the system created the token.
    public var tokenCreationDate: Date?
    /// The app's App Store id.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The custom link token type (`ACQUISITION`, `SERVICES`, …), present only for custom link tokens.
    public var tokenType: String?

    /// `Sandbox` when ``externalPurchaseId`` starts with `SANDBOX`, else `Production` (Apple's rule).
    public var derivedEnvironment: AppStoreEnvironment {
        externalPurchaseId?.hasPrefix("SANDBOX") == true ? .sandbox : .production
    }

    /// Creates an empty token; set members afterwards.
    public init() {}

    /// Builds the model from the `externalPurchaseToken` object of a verified payload.
    /// - Throws: ``VerificationError`` (`invalid-field`, `invalid-date`).
    init(json: JSONObject, dateRange: ClosedRange<Int64>) throws(VerificationError) {
        externalPurchaseId = try json.optionalString("externalPurchaseId")
        tokenCreationDate = try json.optionalDate("tokenCreationDate", range: dateRange)
        appAppleId = try json.optionalInt64("appAppleId")
        bundleId = try json.optionalString("bundleId")
        tokenType = try json.optionalString("tokenType")
    }
}
