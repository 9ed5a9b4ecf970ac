/// A stable, kebab-case code for a deliberate end of processing without output
/// (`receipt-outcome/v1` `outcome`).
public struct OutcomeCode: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a code.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    public var description: String { rawValue }

    /// Fulfil had already emitted this exact entitlement event.
    public static let duplicateSuppressed: OutcomeCode = "duplicate-suppressed"
    /// An older update of a purchase whose newer state fulfil already applied, which would move
    /// the entitlement backwards (``EntitlementRules/isStale(_:after:revoked:)``); revocations are
    /// never stale.
    public static let staleSuppressed: OutcomeCode = "stale-suppressed"
    /// The verifier found a valid submission that contains no transactions.
    public static let noTransactions: OutcomeCode = "no-transactions"
}
