import Foundation

/// `receipt-submitted/v1`: what an app backend publishes to ``Topics/submitted`` when a client
/// hands in something to verify.
///
/// ```json
/// {"schema":"receipt-submitted/v1","submissionId":"…","userId":"…","bundleId":"com.example.game",
///  "kind":"signedTransaction","payload":"<the JWS>","submittedAt":"2026-11-30T06:00:00Z"}
/// ```
/// - `submissionId`: the producer's idempotency id, `[A-Za-z0-9._:-]`, at most 128 characters.
/// - `userId`: the app's user id, printable, at most 256 UTF-8 bytes; may be omitted (or `null`, or
///   empty) for `serverNotification`, which Apple sends without one.
/// - `bundleId`: ASCII letters, digits, `-`, dot-separated segments, at most 155 characters.
/// - `kind`: one of ``SubmissionKind``.
/// - `payload`: depends on `kind` (JWS, base64 receipt, or digits for `transactionId`).
/// - `submittedAt`: RFC 3339.
///
/// Ingest does not decode this type with `Codable` (it parses field by field to give each
/// problem its own reason code); the type exists for producers, tests and documentation.
/// The record key is free (producers should use the ``OwnerKey``); unknown fields are ignored.
public struct ReceiptSubmitted: Sendable, Codable, Equatable {
    /// The schema identifier of this contract.
    public static let schema = "receipt-submitted/v1"

    /// The contract identifier, checked on decode.
    public var schema: String
    /// The producer's idempotency id of the submission.
    public var submissionId: String
    /// The app's own user id (opaque); empty for a `serverNotification` without one (then not encoded).
    public var userId: String
    /// The app's bundle identifier.
    public var bundleId: String
    /// Raw `kind` string (kept raw so tests can submit unknown kinds).
    public var kind: String
    /// The receipt material itself; never logged.
    public var payload: String
    /// When the producer says the client submitted it.
    public var submittedAt: Date

    /// Creates a submission with the current schema.
    public init(submissionId: String, userId: String, bundleId: String, kind: SubmissionKind,
                payload: String, submittedAt: Date) {
        self.schema = Self.schema
        self.submissionId = submissionId
        self.userId = userId
        self.bundleId = bundleId
        self.kind = kind.rawValue
        self.payload = payload
        self.submittedAt = submittedAt
    }

    private enum CodingKeys: String, CodingKey {
        case schema, submissionId, userId, bundleId, kind, payload, submittedAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        submissionId = try c.decode(String.self, forKey: .submissionId)
        userId = try c.decodeIfPresent(String.self, forKey: .userId) ?? ""
        bundleId = try c.decode(String.self, forKey: .bundleId)
        kind = try c.decode(String.self, forKey: .kind)
        payload = try c.decode(String.self, forKey: .payload)
        submittedAt = try c.decodeTimestamp(forKey: .submittedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(submissionId, forKey: .submissionId)
        // A user-less notification omits the member, as the contract allows.
        if !userId.isEmpty || kind != SubmissionKind.serverNotification.rawValue { try c.encode(userId, forKey: .userId) }
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(kind, forKey: .kind)
        try c.encode(payload, forKey: .payload)
        try c.encodeTimestamp(submittedAt, forKey: .submittedAt)
    }
}
