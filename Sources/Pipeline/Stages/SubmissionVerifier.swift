import AppStore

/// Checks a submission cryptographically and returns the transactions it proves.
///
/// The seam between the pipeline and the App Store code: the real implementation (JWS chain
/// verification on OpenSSL, App Store Server API look-ups) lives elsewhere and is injected into
/// ``VerifyStage``; tests inject ``ClosureSubmissionVerifier``.
///
/// Failures are thrown as ``ClassifiedError``s: transient for anything that may work later
/// (network, OCSP, throttling; Apple's `retryableVerificationFailure`), permanent with a stable
/// reason code otherwise (e.g. `invalid-signature`, `bundle-id-mismatch`, `unsupported-kind`).
///
/// A verifier that checks signed data offline may also verify in two halves
/// (``beginOffline(_:deferringTo:)`` and ``finish(_:of:in:)``), so that ``VerifyStage`` checks a
/// round's signatures back to back (``SignatureBatch``); the outcome is the same as
/// ``verify(_:context:)``'s.
public protocol SubmissionVerifier: Sendable {
    /// The kinds this verifier can handle; ``VerifyStage`` rejects other kinds with
    /// `unsupported-kind` without calling ``verify(_:context:)``.
    var supportedKinds: Set<SubmissionKind> { get }

    /// Verifies one submission.
    /// - Returns: every transaction the submission proves (possibly none, e.g. an app receipt
    ///   without in-app purchases).
    /// - Throws: a ``ClassifiedError``.
    func verify(_ submission: IngestedSubmission, context: StageContext) async throws -> [VerifiedTransaction]

    /// Whether verifying this submission may wait on the network (an App Store request): the verify
    /// stage's runner gives such a submission a task of its own under the processing timeout, and
    /// checks the others in its batches. Default `true`.
    func mayWaitOnNetwork(_ submission: IngestedSubmission) -> Bool

    /// Begins verifying a submission checked offline, its ES256 check put off into `batch`; nil
    /// when this verifier does not verify `submission` so (``VerifyStage`` then calls
    /// ``verify(_:context:)``). Default nil.
    func beginOffline(_ submission: IngestedSubmission, deferringTo batch: SignatureBatch) -> OfflineVerification?

    /// The transactions a begun verification of `submission` proves, once `batch.checkAll()` has
    /// run; throws as ``verify(_:context:)`` would.
    func finish(_ verification: OfflineVerification, of submission: IngestedSubmission, in batch: SignatureBatch) throws
        -> [VerifiedTransaction]
}

extension SubmissionVerifier {
    /// By default every kind is supported.
    public var supportedKinds: Set<SubmissionKind> { Set(SubmissionKind.allCases) }

    public func mayWaitOnNetwork(_ submission: IngestedSubmission) -> Bool { true }

    public func beginOffline(_ submission: IngestedSubmission, deferringTo batch: SignatureBatch) -> OfflineVerification? { nil }

    /// Never called: the default ``beginOffline(_:deferringTo:)`` begins nothing.
    public func finish(_ verification: OfflineVerification, of submission: IngestedSubmission, in batch: SignatureBatch) throws
        -> [VerifiedTransaction] {
        preconditionFailure("\(Self.self) finished an offline verification it never begins")
    }
}

/// A ``SubmissionVerifier`` backed by a closure: for tests, demos and benchmarks.
///
/// - Important: it verifies nothing by itself; never wire it into a production worker.
public struct ClosureSubmissionVerifier: SubmissionVerifier {
    public let supportedKinds: Set<SubmissionKind>
    private let body: @Sendable (IngestedSubmission, StageContext) async throws -> [VerifiedTransaction]

    /// Creates a verifier that answers with `body`.
    public init(supportedKinds: Set<SubmissionKind> = Set(SubmissionKind.allCases),
                _ body: @escaping @Sendable (IngestedSubmission, StageContext) async throws -> [VerifiedTransaction]) {
        self.supportedKinds = supportedKinds
        self.body = body
    }

    public func verify(_ submission: IngestedSubmission, context: StageContext) async throws -> [VerifiedTransaction] {
        try await body(submission, context)
    }
}
