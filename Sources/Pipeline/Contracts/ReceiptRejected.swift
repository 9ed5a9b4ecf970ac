import Foundation

/// `receipt-rejected/v1`: a submission (or one transaction of it) that a stage refused for good,
/// on ``Topics/rejected``, keyed by the key of the input record that was refused.
///
/// Fields: `schema`, `submissionId` (`null` when the input was too broken to tell), `stage`,
/// `reason` (a stable kebab-case ``ReasonCode``), `detail` (human text, never the payload),
/// `bundleId`, `userId`, `kind` (raw, as submitted), `payloadSHA256`, `transactionId` (all
/// `null` when unknown), `rejectedAt` (RFC 3339), and `original`: the input record's value as a
/// UTF-8 string (`originalEncoding` `"utf8"`) or base64 when it is not UTF-8 (`"base64"`),
/// cut to a bounded size (`originalTruncated` says so) so a rejection never exceeds the broker's
/// message limit.
public struct ReceiptRejected: Sendable, Codable, Equatable {
    /// The schema identifier of this contract.
    public static let schema = "receipt-rejected/v1"

    /// How ``original`` is encoded.
    public enum OriginalEncoding: String, Sendable, Codable {
        case utf8
        case base64
    }

    /// The contract identifier, checked on decode.
    public var schema: String
    /// The producer's idempotency id of the submission.
    public var submissionId: String?
    /// The stage that wrote this record.
    public var stage: StageName
    /// The stable code saying why (see ``ReasonCode``).
    public var reason: ReasonCode
    /// Human-readable explanation; never the payload.
    public var detail: String
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's own user id (opaque).
    public var userId: String?
    /// What the payload is (see ``SubmissionKind``).
    public var kind: String?
    /// Lowercase hex SHA-256 of the payload, for logs and tracing.
    public var payloadSHA256: String?
    /// The App Store transaction id.
    public var transactionId: String?
    /// When the stage rejected it.
    public var rejectedAt: Date
    /// The input record value (see ``originalEncoding``), possibly cut.
    public var original: String
    /// How ``original`` is encoded.
    public var originalEncoding: OriginalEncoding
    /// Whether ``original`` was cut to the size limit.
    public var originalTruncated: Bool

    /// Creates a rejection, encoding `originalValue` as UTF-8 text when possible and as base64
    /// otherwise, after cutting it to `maxOriginalBytes` (at a character boundary for text).
    public init(stage: StageName, reason: ReasonCode, detail: String, subject: SubmissionSubject,
                rejectedAt: Date, originalValue: [UInt8], maxOriginalBytes: Int = 256 * 1024) {
        self.schema = Self.schema
        self.submissionId = subject.submissionId
        self.stage = stage
        self.reason = reason
        self.detail = detail
        self.bundleId = subject.bundleId
        self.userId = subject.userId
        self.kind = subject.kind
        self.payloadSHA256 = subject.payloadSHA256
        self.transactionId = subject.transactionId
        self.rejectedAt = rejectedAt
        let limit = max(0, maxOriginalBytes)
        if let text = String(validating: originalValue, as: UTF8.self) {
            originalEncoding = .utf8
            if originalValue.count <= limit {
                original = text
                originalTruncated = false
            } else {
                var cut = limit
                // Step back over UTF-8 continuation bytes so the cut lands on a scalar boundary.
                while cut > 0, originalValue[cut] & 0xC0 == 0x80 { cut -= 1 }
                original = String(decoding: originalValue[..<cut], as: UTF8.self)
                originalTruncated = true
            }
        } else {
            originalEncoding = .base64
            originalTruncated = originalValue.count > limit
            original = Data(originalValue.prefix(limit)).base64EncodedString()
        }
    }

    private enum CodingKeys: String, CodingKey {
        case schema, submissionId, stage, reason, detail, bundleId, userId, kind, payloadSHA256, transactionId
        case rejectedAt, original, originalEncoding, originalTruncated
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        submissionId = try c.decodeIfPresent(String.self, forKey: .submissionId)
        stage = try c.decode(StageName.self, forKey: .stage)
        reason = try c.decode(ReasonCode.self, forKey: .reason)
        detail = try c.decode(String.self, forKey: .detail)
        bundleId = try c.decodeIfPresent(String.self, forKey: .bundleId)
        userId = try c.decodeIfPresent(String.self, forKey: .userId)
        kind = try c.decodeIfPresent(String.self, forKey: .kind)
        payloadSHA256 = try c.decodeIfPresent(String.self, forKey: .payloadSHA256)
        transactionId = try c.decodeIfPresent(String.self, forKey: .transactionId)
        rejectedAt = try c.decodeTimestamp(forKey: .rejectedAt)
        original = try c.decode(String.self, forKey: .original)
        originalEncoding = try c.decode(OriginalEncoding.self, forKey: .originalEncoding)
        originalTruncated = try c.decodeIfPresent(Bool.self, forKey: .originalTruncated) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(submissionId, forKey: .submissionId)
        try c.encode(stage, forKey: .stage)
        try c.encode(reason, forKey: .reason)
        try c.encode(detail, forKey: .detail)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(kind, forKey: .kind)
        try c.encode(payloadSHA256, forKey: .payloadSHA256)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encodeTimestamp(rejectedAt, forKey: .rejectedAt)
        try c.encode(original, forKey: .original)
        try c.encode(originalEncoding, forKey: .originalEncoding)
        try c.encode(originalTruncated, forKey: .originalTruncated)
    }
}
