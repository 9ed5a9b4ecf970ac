/// The result of a mass renewal-date extension (`summary` of a `RENEWAL_EXTENSION` / `SUMMARY`
/// notification). Every member is optional; unknown members are ignored.
public struct NotificationSummary: Sendable, Hashable, Codable {
    /// Raw `environment`; see ``environment``.
    public var rawEnvironment: String?
    /// The app's App Store id.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The extended product.
    public var productId: String?
    /// The id of the extension request.
    public var requestIdentifier: String?
    /// Storefronts the extension applied to (ISO 3166-1 alpha-3).
    public var storefrontCountryCodes: [String]?
    /// Subscriptions extended.
    public var succeededCount: Int64?
    /// Subscriptions that could not be extended.
    public var failedCount: Int64?

    /// The environment, or `nil` when absent or unknown.
    public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(rawValue:)) }

    /// Creates an empty summary; set members afterwards.
    public init() {}

    /// Builds the model from the `summary` object of a verified payload.
    /// - Throws: ``VerificationError`` (`invalid-field`).
    init(json: JSONObject) throws(VerificationError) {
        rawEnvironment = try json.optionalString("environment")
        appAppleId = try json.optionalInt64("appAppleId")
        bundleId = try json.optionalString("bundleId")
        productId = try json.optionalString("productId")
        requestIdentifier = try json.optionalString("requestIdentifier")
        storefrontCountryCodes = try json.optionalStringArray("storefrontCountryCodes")
        succeededCount = try json.optionalInt64("succeededCount")
        failedCount = try json.optionalInt64("failedCount")
    }

    private enum CodingKeys: String, CodingKey {
        case rawEnvironment = "environment"
        case appAppleId, bundleId, productId, requestIdentifier, storefrontCountryCodes, succeededCount, failedCount
    }
}
