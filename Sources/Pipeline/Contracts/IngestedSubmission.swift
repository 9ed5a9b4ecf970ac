import Foundation

/// `receipt-ingested/v1`: a submission that passed ingest's structural checks, on
/// ``Topics/ingested`` (ingest → verify), keyed by the ``OwnerKey`` (`bundleId/userId`). `userId` is
/// empty for a `serverNotification` that named no user (fulfil applies it to the purchase's owner).
///
/// Fields: `schema`, `submissionId`, `bundleId`, `userId`, `kind`, `payload` (normalised: surrounding
/// whitespace trimmed; for `appReceipt` all whitespace removed and base64 padding completed),
/// `payloadSHA256` (lowercase hex SHA-256 of the normalised payload's UTF-8), `submittedAt`
/// (the producer's claim) and `ingestedAt` (when ingest accepted it), both RFC 3339.
public struct IngestedSubmission: Sendable, Codable, Equatable, OutboundMessage {
    /// The schema identifier of this contract.
    public static let schema = "receipt-ingested/v1"
    public static var outputTopic: OutputTopic { .ingested }

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
    /// The receipt material itself; never logged. Read from a record, it stays the record's
    /// bytes until asked for as a `String` (``withPayloadUTF8(_:)`` reads it without one).
    public var payload: String {
        get { payloadText.string }
        set { payloadText = RecordText(newValue) }
    }
    private(set) var payloadText: RecordText
    /// Lowercase hex SHA-256 of the payload, for logs and tracing.
    public var payloadSHA256: String
    /// When the producer says the client submitted it.
    public var submittedAt: Date
    /// When ingest accepted it.
    public var ingestedAt: Date

    /// Creates an ingested submission with the current schema; `payloadSHA256` is computed.
    public init(submissionId: String, bundleId: String, userId: String, kind: SubmissionKind,
                payload: String, submittedAt: Date, ingestedAt: Date) {
        self.init(schema: Self.schema, submissionId: submissionId, bundleId: bundleId, userId: userId, kind: kind,
                  payload: RecordText(payload), payloadSHA256: SHA256.hexDigest(payload), submittedAt: submittedAt,
                  ingestedAt: ingestedAt)
    }

    /// Creates one from every member (as read, or with the current schema and a computed hash).
    /// Not inlined, as ``VerifiedTransaction``'s: its reader assigning the members itself built the
    /// value in a temporary and copied it out.
    @inline(never)
    init(schema: String, submissionId: String, bundleId: String, userId: String, kind: SubmissionKind,
         payload: RecordText, payloadSHA256: String, submittedAt: Date, ingestedAt: Date) {
        self.schema = schema
        self.submissionId = submissionId
        self.bundleId = bundleId
        self.userId = userId
        self.kind = kind
        self.payloadText = payload
        self.payloadSHA256 = payloadSHA256
        self.submittedAt = submittedAt
        self.ingestedAt = ingestedAt
    }

    /// `body` over the payload's UTF-8, where it is: verify hands a JWS to the verifier so.
    public func withPayloadUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try payloadText.withUTF8(body)
    }

    /// The owner of this submission.
    public var owner: OwnerKey { OwnerKey(bundleId: bundleId, userId: userId) }
    /// The owner key; a notification without a user is keyed `bundleId/` + its payload hash, which
    /// spreads such notifications over partitions and keeps Apple's retries of one together.
    public var recordKey: String { userId.isEmpty ? bundleId + "/" + payloadSHA256 : owner.encoded }

    private enum CodingKeys: String, CodingKey {
        case schema, submissionId, bundleId, userId, kind, payload, payloadSHA256, submittedAt, ingestedAt
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
        payloadText = RecordText(try c.decode(String.self, forKey: .payload))
        payloadSHA256 = try c.decode(String.self, forKey: .payloadSHA256)
        submittedAt = try c.decodeTimestamp(forKey: .submittedAt)
        ingestedAt = try c.decodeTimestamp(forKey: .ingestedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(submissionId, forKey: .submissionId)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(kind, forKey: .kind)
        try c.encode(payload, forKey: .payload)
        try c.encode(payloadSHA256, forKey: .payloadSHA256)
        try c.encodeTimestamp(submittedAt, forKey: .submittedAt)
        try c.encodeTimestamp(ingestedAt, forKey: .ingestedAt)
    }
}
