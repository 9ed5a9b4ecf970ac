import Observability

/// What is known about the submission a record belongs to: the identifying fields a rejection or
/// an outcome repeats so it can be traced without the payload. Every field is optional because
/// a broken input may reveal none of them.
///
/// Optional members are spelled `Optional<T>`, as in ``VerifiedTransaction``, whose documentation
/// says why.
public struct SubmissionSubject: Sendable, Equatable {
    /// The producer's submission id.
    public var submissionId: Optional<String>
    /// The app's bundle id.
    public var bundleId: Optional<String>
    /// The app's user id.
    public var userId: Optional<String>
    /// The raw `kind` string as submitted (it may be one ingest does not know).
    public var kind: Optional<String>
    /// Lowercase hex SHA-256 of the (normalised) payload.
    public var payloadSHA256: Optional<String>
    /// The App Store transaction concerned, if one.
    public var transactionId: Optional<String>

    /// Creates a subject; unknown fields stay nil. Not inlined, as ``VerifiedTransaction``'s.
    @inline(never)
    public init(submissionId: String? = nil, bundleId: String? = nil, userId: String? = nil,
                kind: String? = nil, payloadSHA256: String? = nil, transactionId: String? = nil) {
        self.submissionId = submissionId
        self.bundleId = bundleId
        self.userId = userId
        self.kind = kind
        self.payloadSHA256 = payloadSHA256
        self.transactionId = transactionId
    }

    /// A subject with nothing known.
    public static let unknown = SubmissionSubject()

    /// This subject with every nil field filled from `other`.
    public func filling(from other: SubmissionSubject) -> SubmissionSubject {
        SubmissionSubject(submissionId: submissionId ?? other.submissionId, bundleId: bundleId ?? other.bundleId,
                          userId: userId ?? other.userId, kind: kind ?? other.kind,
                          payloadSHA256: payloadSHA256 ?? other.payloadSHA256,
                          transactionId: transactionId ?? other.transactionId)
    }
}

/// An input contract that can say which submission it belongs to, so the runner can fill
/// rejections, outcomes and log metadata without stage-specific code. Its metatypes are
/// `Sendable`: a runner keeps its input type's conformance, looked up once.
public protocol SubmissionDescribing: SendableMetatype {
    /// The identifying fields of this message.
    var subject: SubmissionSubject { get }
}

extension IngestedSubmission: SubmissionDescribing {
    public var subject: SubmissionSubject {
        SubmissionSubject(submissionId: submissionId, bundleId: bundleId, userId: userId,
                          kind: kind.rawValue, payloadSHA256: payloadSHA256)
    }
}

extension ReceiptVerified: SubmissionDescribing {
    public var subject: SubmissionSubject {
        SubmissionSubject(submissionId: submissionId, bundleId: bundleId, userId: userId,
                          kind: kind.rawValue, transactionId: transaction.transactionId)
    }
}

extension SubmissionSubject {
    /// How a transaction id appears in logs (``LoggingKeys/transactionIdHash``): the first 16 hex
    /// digits of its SHA-256.
    public static func loggedTransactionId(_ id: String) -> MetadataValue {
        .string(String(SHA256.hexDigest(id).prefix(16)))
    }
}
