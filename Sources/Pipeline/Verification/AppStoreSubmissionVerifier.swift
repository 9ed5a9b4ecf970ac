import AppStore
import Foundation

/// The production ``SubmissionVerifier``: StoreKit 2 signed transactions checked offline by
/// ``SignedDataVerifier`` (x5c chain to the configured Apple root, OIDs, ES256, validity at the
/// transaction's `signedDate`), then bound to the submission that carried them.
///
/// Binding matters as much as the signature: a genuine JWS of *another* app, replayed under
/// this app's bundle id, must not grant anything, so the signed `bundleId` must equal the
/// submission's `bundleId` exactly (`bundle-id-mismatch`) even when the verifier itself accepts
/// any bundle id.
///
/// Kinds other than `signedTransaction` are answered `unsupported-kind` by ``VerifyStage`` until
/// the App Store Server API, notification and legacy-receipt paths land.
public struct AppStoreSubmissionVerifier: SubmissionVerifier {
    public let supportedKinds: Set<SubmissionKind> = [.signedTransaction]
    private let verifier: SignedDataVerifier

    /// - Parameter verifier: the offline JWS verifier (shared: its chain cache is what makes it fast).
    public init(verifier: SignedDataVerifier) {
        self.verifier = verifier
    }

    public func verify(_ submission: IngestedSubmission, context: StageContext) async throws -> [VerifiedTransaction] {
        switch verifier.verifyAndDecodeTransaction(submission.payload) {
        case .invalid(let error):
            throw StageError(error.isRetryable ? .transient : .permanent,
                             reason: ReasonCode(error.reason.code), detail: error.detail)
        case .valid(let payload):
            guard payload.bundleId == submission.bundleId else {
                throw StageError.permanent(.bundleIdMismatch,
                                           "signed bundleId \(payload.bundleId) differs from the submission's \(submission.bundleId)")
            }
            return [VerifiedTransaction(payload)]
        }
    }
}

extension VerifiedTransaction {
    /// The pipeline's view of a verified StoreKit 2 transaction.
    public init(_ payload: JWSTransactionDecodedPayload) {
        self.init(transactionId: payload.transactionId, originalTransactionId: payload.originalTransactionId,
                  bundleId: payload.bundleId, productId: payload.productId, type: payload.rawType,
                  quantity: Int(payload.quantity ?? 1), purchaseDate: payload.purchaseDate,
                  expiresDate: payload.expiresDate, revocationDate: payload.revocationDate,
                  revocationReason: payload.rawRevocationReason.map(Int.init), environment: payload.rawEnvironment,
                  signedDate: payload.signedDate, appAccountToken: payload.rawAppAccountToken)
    }
}
