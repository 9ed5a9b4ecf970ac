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
/// any bundle id.
/// - `transactionId`: looked up with the App Store Server API (Get Transaction Info, the other
///   environment tried on 4040010); the signed answer is verified like any JWS.
/// - `appReceipt`: per ``LegacyReceiptMode``.
///
/// App Store request failures keep the taxonomy's codes (`appstore-api-*`, `verify-receipt-*`,
/// `network-*`), retryability and `Retry-After` (``AppStoreRequestStageError``).
///
/// A class: the verify stage calls it through `any SubmissionVerifier` several times per
/// submission, and each call on a struct copied it (a retain of each of its members).
public final class AppStoreSubmissionVerifier: SubmissionVerifier {
    public let supportedKinds: Set<SubmissionKind>
    private let verifier: SignedDataVerifier
    /// The offline JWS verifier (its verified-JWS cache statistics).
    public var signedData: SignedDataVerifier { verifier }
    private let legacy: LegacyReceiptVerification?
    private let serverAPI: AppStoreServerAPIClient?

    /// - Parameters:
    ///   - verifier: the offline JWS verifier (shared: its chain cache is what makes it fast).
    ///   - legacy: how `appReceipt` submissions are verified; nil answers them `unsupported-kind`.
    ///   - serverAPI: the App Store Server API client for `transactionId` submissions (and the
    ///     `serverAPI` receipt mode); nil answers `transactionId` with `unsupported-kind`.
    public init(verifier: SignedDataVerifier, legacy: LegacyReceiptVerification? = nil,
                serverAPI: AppStoreServerAPIClient? = nil) {
        self.verifier = verifier
        self.legacy = legacy
        self.serverAPI = serverAPI
        var kinds: Set<SubmissionKind> = [.signedTransaction, .serverNotification, .signedRenewalInfo]
        if legacy != nil { kinds.insert(.appReceipt) }
        if serverAPI != nil { kinds.insert(.transactionId) }
        supportedKinds = kinds
    }

    public func verify(_ submission: IngestedSubmission, context: StageContext) async throws -> [VerifiedTransaction] {
        switch submission.kind {
        case .serverNotification:
            return try Self.transactions(of: submission.withPayloadUTF8 { verifier.verifyAndDecodeNotification(utf8: $0) },
                                         for: submission)
        case .signedRenewalInfo:
            _ = try Self.unwrap(submission.withPayloadUTF8 { verifier.verifyAndDecodeRenewalInfo(utf8: $0) })
            return []
        case .transactionId:
            guard let serverAPI else { throw StageError.permanent(.unsupportedKind, "no App Store Server API configured") }
            let response = try await Self.request { try await serverAPI.getTransactionInfo(transactionId: submission.payload, attempt: context.attempt) }
            let transaction = try Self.unwrap(response.verifiedTransaction(using: verifier))
            try Self.bind(signed: transaction.bundleId, to: submission)
            return [VerifiedTransaction(transaction)]
        case .appReceipt:
            guard let legacy else { throw StageError.permanent(.unsupportedKind, "no legacy receipt verification configured") }
            return try await verifyReceipt(submission, legacy: legacy, context: context)
        case .signedTransaction:
            return try Self.transactions(of: submission.withPayloadUTF8 { verifier.verifyAndDecodeTransaction(utf8: $0) },
                                         for: submission)
        }
    }

    /// The kinds checked offline begin here (the others return nil: verify(_:context:) takes them).
    public func beginOffline(_ submission: IngestedSubmission, deferringTo batch: SignatureBatch) -> OfflineVerification? {
        switch submission.kind {
        case .signedTransaction:
            OfflineVerification(pending: .transaction(submission.withPayloadUTF8 { verifier.beginTransaction(utf8: $0, deferringTo: batch) }))
        case .serverNotification:
            OfflineVerification(pending: .notification(submission.withPayloadUTF8 { verifier.beginNotification(utf8: $0, deferringTo: batch) }))
        case .signedRenewalInfo:
            OfflineVerification(pending: .renewalInfo(submission.withPayloadUTF8 { verifier.beginRenewalInfo(utf8: $0, deferringTo: batch) }))
        case .transactionId, .appReceipt:
            nil
        }
    }

    public func finish(_ verification: OfflineVerification, of submission: IngestedSubmission, in batch: SignatureBatch) throws
        -> [VerifiedTransaction] {
        switch verification.pending {
        case .transaction(let pending): return try Self.transactions(of: verifier.finish(pending, in: batch), for: submission)
        case .notification(let pending): return try Self.transactions(of: verifier.finish(pending, in: batch), for: submission)
        case .renewalInfo(let pending):
            _ = try Self.unwrap(verifier.finish(pending, in: batch))
            return []
        }
    }

    /// A verified transaction, bound to the submission that carried it.
    private static func transactions(of result: VerificationResult<JWSTransactionDecodedPayload>,
                                     for submission: IngestedSubmission) throws -> [VerifiedTransaction] {
        let transaction = try unwrap(result)
        try bind(signed: transaction.bundleId, to: submission)
        return [VerifiedTransaction(transaction)]
    }

    /// A verified notification's transaction, if it has one, with the notification attached; bound
    /// to the submission that carried it.
    private static func transactions(of result: VerificationResult<ResponseBodyV2DecodedPayload>,
                                     for submission: IngestedSubmission) throws -> [VerifiedTransaction] {
        let notification = try unwrap(result)
        try bind(signed: notification.bundleId, to: submission)
        guard let transaction = notification.data?.transactionInfo else { return [] }
        let source = NotificationSource(
            notificationType: notification.rawNotificationType, subtype: notification.rawSubtype,
            notificationUUID: notification.notificationUUID, effect: NotificationEffect(notification).name,
            signedDate: notification.signedDate, renewal: notification.data?.renewalInfo.map(RenewalSnapshot.init))
        return [VerifiedTransaction(transaction, notification: source)]
    }

    /// Signed data is checked offline; a `transactionId` asks the Server API, an `appReceipt`
    /// verifyReceipt or the Server API unless the receipt mode is `local`.
    public func mayWaitOnNetwork(_ submission: IngestedSubmission) -> Bool {
        switch submission.kind {
        case .signedTransaction, .serverNotification, .signedRenewalInfo: false
        case .transactionId: serverAPI != nil
        case .appReceipt: legacy.map { $0.mode != .local } ?? false
        }
    }

    private func verifyReceipt(_ submission: IngestedSubmission, legacy: LegacyReceiptVerification,
                               context: StageContext) async throws -> [VerifiedTransaction] {
        switch legacy.mode {
        case .verifyReceipt:
            // Apple's endpoint is the verifier here (the answer is authenticated by TLS to Apple).
            guard let client = legacy.verifyReceipt else {
                throw StageError.permanent(.unsupportedKind, "receipt mode verifyReceipt without a verifyReceipt client")
            }
            let result = try await Self.request { try await client.verify(receiptData: submission.payload, attempt: context.attempt) }
            try Self.bind(signed: result.bundleId, to: submission)
            let environment = result.rawEnvironment ?? result.environment.rawValue
            return result.transactions.map {
                VerifiedTransaction($0, bundleId: submission.bundleId, environment: environment, answeredAt: context.now)
            }
        case .local, .serverAPI:
            let receipt = try Self.unwrap(legacy.receiptVerifier.verifyAndDecodeAppReceipt(submission.payload))
            try Self.bind(signed: receipt.bundleId, to: submission)
            if legacy.mode == .local {
                let environment = receipt.environment?.rawValue ?? receipt.rawReceiptType ?? ""
                return receipt.inAppPurchases.compactMap {
                    VerifiedTransaction($0, bundleId: submission.bundleId, environment: environment,
                                        signedDate: receipt.receiptCreationDate)
                }
            }
            guard let serverAPI else {
                throw StageError.permanent(.unsupportedKind, "receipt mode serverAPI without an App Store Server API client")
            }
            guard let first = receipt.inAppPurchases.compactMap(\.transactionId).first else { return [] }
            let pages = try await Self.request { try await serverAPI.getAllTransactionHistory(transactionId: first, attempt: context.attempt) }
            var transactions: [VerifiedTransaction] = []
            for page in pages {
                for result in page.verifiedTransactions(using: verifier) {
                    let transaction = try Self.unwrap(result)
                    try Self.bind(signed: transaction.bundleId, to: submission)
                    transactions.append(VerifiedTransaction(transaction))
                }
            }
            return transactions
        }
    }

    /// Runs an App Store request, turning its typed failure into the stage's classified error.
    private static func request<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as any AppStoreRequestFailure {
            throw AppStoreRequestStageError(failure)
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

/// How `appReceipt` submissions are verified: the mode and the verifiers it needs.
public struct LegacyReceiptVerification: Sendable {
    public var mode: LegacyReceiptMode
    /// The local PKCS#7 verifier (modes `local` and `serverAPI`).
    public var receiptVerifier: AppReceiptVerifier
    /// Apple's legacy endpoint (mode `verifyReceipt`).
    public var verifyReceipt: VerifyReceiptClient?

    public init(mode: LegacyReceiptMode, receiptVerifier: AppReceiptVerifier, verifyReceipt: VerifyReceiptClient? = nil) {
        self.mode = mode
        self.receiptVerifier = receiptVerifier
        self.verifyReceipt = verifyReceipt
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
                  signedDate: payload.signedDate, appAccountToken: payload.rawAppAccountToken,
                  isUpgraded: payload.isUpgraded, ownershipType: payload.rawInAppOwnershipType, notification: notification)
    }
}

extension RenewalSnapshot {
    /// The lifecycle fields of a verified renewal info.
    init(_ info: JWSRenewalInfoDecodedPayload) {
        self.init(autoRenew: info.rawAutoRenewStatus.map { $0 == 1 }, autoRenewProductId: info.autoRenewProductId,
                  expirationIntent: info.rawExpirationIntent.map(Int.init),
                  gracePeriodExpiresDate: info.gracePeriodExpiresDate, isInBillingRetryPeriod: info.isInBillingRetryPeriod)
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
