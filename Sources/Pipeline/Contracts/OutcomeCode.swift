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

    /// The input changes nothing fulfil has not already applied (a redelivery, a re-submission,
    /// a restore of a non-consumable, the same change reported by the app and by a notification).
    public static let duplicateSuppressed: OutcomeCode = "duplicate-suppressed"
    /// An older input of a purchase whose newer state fulfil already applied, which would move
    /// it backwards (``PurchaseLifecycle``'s ordering rules).
    public static let staleSuppressed: OutcomeCode = "stale-suppressed"
    /// A notification that never changes an entitlement (`CONSUMPTION_REQUEST`, `REFUND_DECLINED`,
    /// `PRICE_INCREASE`, `TEST`, unknown types, …).
    public static let notificationInformational: OutcomeCode = "notification-informational"
    /// The verifier found a valid submission that contains no transactions.
    public static let noTransactions: OutcomeCode = "no-transactions"
}
