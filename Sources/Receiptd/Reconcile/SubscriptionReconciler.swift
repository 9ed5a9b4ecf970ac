import AppStore
import Foundation
import Pipeline

/// `receiptd reconcile subscriptions`: asks Get All Subscription Statuses for each purchase and
/// submits Apple's signed latest transaction for its recorded owner, so a change receiptd never
/// heard of (a lost notification, drift) is applied, and an unchanged one is `duplicate-suppressed`.
struct SubscriptionReconciler {
    /// One purchase to ask about and whom it belongs to.
    struct Purchase: Equatable {
        var originalTransactionId: String
        var bundleId: String
        var userId: String
    }

    var purchases: [Purchase]
    var fetch: (String) async throws -> StatusResponse
    /// Sends the submissions (key, value) and returns once acknowledged; nil for a dry run.
    var publish: (([(key: String, value: [UInt8])]) async throws -> Void)?
    var clock: () -> Date = Date.init

    func run(_ checkpoint: inout ReconcileCheckpoint, save: (ReconcileCheckpoint) throws -> Void,
             progress: inout ReconcileProgress) async throws {
        while checkpoint.position < purchases.count {
            let purchase = purchases[checkpoint.position]
            do {
                let statuses = try await fetch(purchase.originalTransactionId)
                let signed = statuses.data.flatMap(\.lastTransactions)
                    .filter { $0.originalTransactionId == purchase.originalTransactionId }.compactMap(\.signedTransactionInfo)
                let records = try signed.map { jws -> (key: String, value: [UInt8]) in
                    let submission = ReceiptSubmitted(submissionId: "reconcile:" + SHA256.hexDigest(jws), userId: purchase.userId,
                                                      bundleId: purchase.bundleId, kind: .signedTransaction, payload: jws,
                                                      submittedAt: clock())
                    return (OwnerKey(bundleId: purchase.bundleId, userId: purchase.userId).encoded, try ContractCoding.encode(submission))
                }
                checkpoint.seen += records.count
                if let publish {
                    if !records.isEmpty { try await publish(records) }
                    checkpoint.published += records.count
                } else {
                    checkpoint.skipped += records.count
                }
            } catch let error as AppStoreServerAPIError where !error.isRetryable {
                // Apple will never answer this one (unknown id, wrong app): count it and go on.
                checkpoint.failed += 1
                printError("reconcile subscriptions: \(purchase.originalTransactionId): \(error.reason.code)")
            }
            checkpoint.pages += 1
            checkpoint.position += 1
            try save(checkpoint)
            progress.report(checkpoint, fraction: Double(checkpoint.position) / Double(max(1, purchases.count)))
        }
        checkpoint.finished = true
        try save(checkpoint)
    }
}
