import Foundation

/// `consumption-outcome/v1` (``Topics/consumptionOutcomes``, keyed by `transactionId`): how one
/// answer to a consumption request ended: `answered` (Apple accepted it), `expired` (it came after
/// the deadline and was not sent), `failed` (Apple refused it for good; `reason` says why).
/// Transient failures go through the retry tiers first, and end as dead letters as usual.
public struct ConsumptionOutcome: Sendable, Codable, Equatable, OutboundMessage {
    public static let schema = "consumption-outcome/v1"
    public static var outputTopic: OutputTopic { .consumptionOutcomes }

    public enum Kind: String, Sendable, Codable, CaseIterable {
        case answered, expired, failed
    }

    public var schema: String
    public var requestId: String
    public var transactionId: String
    public var outcome: Kind
    /// For `failed`: the App Store failure reason code (e.g. `appstore-api-bad-request`); for
    /// `expired`: `deadline-passed`; `null` for `answered`.
    public var reason: String?
    /// Apple's HTTP status, when it answered.
    public var appleStatus: Int?
    public var at: Date

    public init(requestId: String, transactionId: String, outcome: Kind, reason: String?, appleStatus: Int?, at: Date) {
        self.schema = Self.schema
        self.requestId = requestId
        self.transactionId = transactionId
        self.outcome = outcome
        self.reason = reason
        self.appleStatus = appleStatus
        self.at = at
    }

    public var recordKey: String { transactionId }

    private enum CodingKeys: String, CodingKey { case schema, requestId, transactionId, outcome, reason, appleStatus, at }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        requestId = try c.decode(String.self, forKey: .requestId)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        outcome = try c.decode(Kind.self, forKey: .outcome)
        reason = try c.decodeIfPresent(String.self, forKey: .reason)
        appleStatus = try c.decodeIfPresent(Int.self, forKey: .appleStatus)
        at = try c.decodeTimestamp(forKey: .at)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(requestId, forKey: .requestId)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(reason, forKey: .reason)
        try c.encode(appleStatus, forKey: .appleStatus)
        try c.encodeTimestamp(at, forKey: .at)
    }
}
