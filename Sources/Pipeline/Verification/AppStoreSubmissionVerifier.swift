import AppStore
import Foundation

/// The production ``SubmissionVerifier`` for StoreKit 2 signed data, checked offline by
/// ``SignedDataVerifier`` (x5c chain to the configured Apple root, OIDs, ES256, validity at the
/// payload's `signedDate`) and then bound to the submission that carried it.
///
/// - `signedTransaction`: the transaction.
/// - `serverNotification` (App Store Server Notifications V2): the notification and the JWS nested
///   in it are verified; its transaction, if any, is returned with the notification's type,
///   subtype, id and derived effect attached (``NotificationSource``). Notifications without a
///   transaction (TEST, summaries) verify to no transactions.
/// - `signedRenewalInfo`: verified; it carries no transaction, so it changes no entitlement until
///   the subscription lifecycle consumes renewal state.
///
/// Binding matters as much as the signature: a genuine JWS of *another* app, replayed under
/// this app's bundle id, must not grant anything, so the signed `bundleId` must equal the
/// submission's `bundleId` exactly (`bundle-id-mismatch`) even when the verifier itself accepts
/// any bundle id. `appReceipt` and `transactionId` are answered `unsupported-kind` by
/// ``VerifyStage`` until the legacy-receipt and Server API paths are wired in.
public struct AppStoreSubmissionVerifier: SubmissionVerifier {
    public let supportedKinds: Set<SubmissionKind> = [.signedTransaction, .serverNotification, .signedRenewalInfo]
    private let verifier: SignedDataVerifier

    /// - Parameter verifier: the offline JWS verifier (shared: its chain cache is what makes it fast).
    public init(verifier: SignedDataVerifier) {
        self.verifier = verifier
    }

    public func verify(_ submission: IngestedSubmission, context: StageContext) async throws -> [VerifiedTransaction] {
        switch submission.kind {
        case .serverNotification:
            let notification = try Self.unwrap(verifier.verifyAndDecodeNotification(submission.payload))
            try Self.bind(signed: notification.bundleId, to: submission)
            guard let transaction = notification.data?.transactionInfo else { return [] }
            let source = NotificationSource(
                notificationType: notification.rawNotificationType, subtype: notification.rawSubtype,
                notificationUUID: notification.notificationUUID, effect: NotificationEffect(notification).name)
            return [VerifiedTransaction(transaction, notification: source)]
        case .signedRenewalInfo:
            _ = try Self.unwrap(verifier.verifyAndDecodeRenewalInfo(submission.payload))
            return []
        default:
            let transaction = try Self.unwrap(verifier.verifyAndDecodeTransaction(submission.payload))
            try Self.bind(signed: transaction.bundleId, to: submission)
            return [VerifiedTransaction(transaction)]
        }
    }

    private static func unwrap<T>(_ result: VerificationResult<T>) throws -> T {
        switch result {
        case .valid(let value): return value
        case .invalid(let error):
            throw StageError(error.isRetryable ? .transient : .permanent, reason: ReasonCode(error.reason.code),
                             detail: error.detail)
        }
    }

    private static func bind(signed bundleId: String?, to submission: IngestedSubmission) throws {
        guard bundleId == submission.bundleId else {
            throw StageError.permanent(.bundleIdMismatch,
                                       "signed bundleId \(bundleId ?? "(none)") differs from the submission's \(submission.bundleId)")
        }
    }
}

extension VerifiedTransaction {
    /// The pipeline's view of a verified StoreKit 2 transaction.
    public init(_ payload: JWSTransactionDecodedPayload, notification: NotificationSource? = nil) {
        self.init(transactionId: payload.transactionId, originalTransactionId: payload.originalTransactionId,
                  bundleId: payload.bundleId, productId: payload.productId, type: payload.rawType,
                  quantity: Int(payload.quantity ?? 1), purchaseDate: payload.purchaseDate,
                  expiresDate: payload.expiresDate, revocationDate: payload.revocationDate,
                  revocationReason: payload.rawRevocationReason.map(Int.init), environment: payload.rawEnvironment,
                  signedDate: payload.signedDate, appAccountToken: payload.rawAppAccountToken, notification: notification)
    }
}

extension NotificationEffect {
    /// The effect's stable name in contracts.
    var name: String {
        switch self {
        case .transactionUpdate: "transactionUpdate"
        case .revoke: "revoke"
        case .reinstate: "reinstate"
        case .expire: "expire"
        case .gracePeriod: "gracePeriod"
        case .billingRetry: "billingRetry"
        case .renewalPreferenceChanged: "renewalPreferenceChanged"
        case .renewalStatusChanged: "renewalStatusChanged"
        case .informational: "informational"
        }
    }
}
