import Foundation

/// `receipt-verified/v1`: one verified transaction of a submission, on ``Topics/verified``
/// (verify → fulfil).
///
/// One record per transaction, **keyed by `originalTransactionId`**, so every update of one
/// subscription (renewals, expiry, revocation) lands in one partition: de-duplication and
/// ordering are partition-local for fulfil.
///
/// Fields: `schema`, `submissionId`, `bundleId`, `userId`, `kind` (of the submission),
/// `verifiedAt` (RFC 3339), `transaction` (``VerifiedTransaction``).
public struct ReceiptVerified: Sendable, Codable, Equatable, OutboundMessage {
    /// The schema identifier of this contract.
    public static let schema = "receipt-verified/v1"
    public static var outputTopic: OutputTopic { .verified }

    /// The contract identifier, checked on decode.
    public var schema: String
    /// The producer's idempotency id of the submission.
    public var submissionId: String
    /// The app's bundle identifier.
    public var bundleId: String
    /// The app's own user id (opaque).
    public var userId: String
    /// What the payload is (see ``SubmissionKind``).
    public var kind: SubmissionKind
    /// When verify accepted the transaction.
    public var verifiedAt: Date
    /// The verified transaction.
    public var transaction: VerifiedTransaction

    /// Creates a verified-transaction message with the current schema.
    public init(submissionId: String, bundleId: String, userId: String, kind: SubmissionKind,
                verifiedAt: Date, transaction: VerifiedTransaction) {
        self.init(schema: Self.schema, submissionId: submissionId, bundleId: bundleId, userId: userId, kind: kind,
                  verifiedAt: verifiedAt, transaction: transaction)
    }

    /// Creates one from every member (as read, or with the current schema). Not inlined: inlined
    /// into a caller that reads another value's members, an initializer built the message in a
    /// temporary and copied it out (``VerifiedTransaction`` says more).
    @inline(never)
    init(schema: String, submissionId: String, bundleId: String, userId: String, kind: SubmissionKind,
         verifiedAt: Date, transaction: VerifiedTransaction) {
        self.schema = schema
        self.submissionId = submissionId
        self.bundleId = bundleId
        self.userId = userId
        self.kind = kind
        self.verifiedAt = verifiedAt
        self.transaction = transaction
    }

    public var recordKey: String { transaction.originalTransactionId }

    /// The owner of the submission this transaction came from.
    public var owner: OwnerKey { OwnerKey(bundleId: bundleId, userId: userId) }

    private enum CodingKeys: String, CodingKey {
        case schema, submissionId, bundleId, userId, kind, verifiedAt, transaction
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "expected \(Self.schema)")
        }
        submissionId = try c.decode(String.self, forKey: .submissionId)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        kind = try c.decode(SubmissionKind.self, forKey: .kind)
        verifiedAt = try c.decodeTimestamp(forKey: .verifiedAt)
        transaction = try c.decode(VerifiedTransaction.self, forKey: .transaction)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(submissionId, forKey: .submissionId)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(kind, forKey: .kind)
        try c.encodeTimestamp(verifiedAt, forKey: .verifiedAt)
        try c.encode(transaction, forKey: .transaction)
    }
}
