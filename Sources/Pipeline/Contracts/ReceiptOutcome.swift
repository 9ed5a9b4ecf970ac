import Foundation

/// `receipt-outcome/v1`: a stage ended a submission (or one of its transactions) on purpose
/// without emitting anything downstream, on ``Topics/outcomes``, keyed like the input record.
///
/// Without it an accounting consumer could not tell "suppressed as a duplicate" from "lost".
/// Fields: `schema`, `submissionId` (`null` only if unknown), `stage`, `outcome` (an
/// ``OutcomeCode`` such as `duplicate-suppressed`), `transactionId` (or `null`), `at` (RFC 3339).
public struct ReceiptOutcome: Sendable, Codable, Equatable {
    /// The schema identifier of this contract.
    public static let schema = "receipt-outcome/v1"

    /// The contract identifier, checked on decode.
    public var schema: String
    /// The producer's idempotency id of the submission.
    public var submissionId: String?
    /// The stage that wrote this record.
    public var stage: StageName
    /// Why processing ended without output.
    public var outcome: OutcomeCode
    /// The App Store transaction id.
    public var transactionId: String?
    /// When the stage ended it.
    public var at: Date

    /// Creates an outcome with the current schema.
    public init(submissionId: String?, stage: StageName, outcome: OutcomeCode, transactionId: String?, at: Date) {
        self.schema = Self.schema
        self.submissionId = submissionId
        self.stage = stage
        self.outcome = outcome
        self.transactionId = transactionId
        self.at = at
    }

    private enum CodingKeys: String, CodingKey {
        case schema, submissionId, stage, outcome, transactionId, at
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        submissionId = try c.decodeIfPresent(String.self, forKey: .submissionId)
        stage = try c.decode(StageName.self, forKey: .stage)
        outcome = try c.decode(OutcomeCode.self, forKey: .outcome)
        transactionId = try c.decodeIfPresent(String.self, forKey: .transactionId)
        at = try c.decodeTimestamp(forKey: .at)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(submissionId, forKey: .submissionId)
        try c.encode(stage, forKey: .stage)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encodeTimestamp(at, forKey: .at)
    }
}
