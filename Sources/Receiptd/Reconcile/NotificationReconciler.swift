import AppStore
import Foundation
import Pipeline

/// `receiptd reconcile notifications`: walks Get Notification History for each environment and
/// republishes every notification exactly as the receiver would have (``NotificationIntake``: same
/// submission id and key), so one the receiver missed enters the pipeline and one it had is a
/// harmless repeat (fulfil suppresses it). I/O is injected, so the loop is tested without Apple.
struct NotificationReconciler {
    var environments: [AppStoreEnvironment]
    var request: NotificationHistoryRequest
    var fetch: (NotificationHistoryRequest, String?, AppStoreEnvironment) async throws -> NotificationHistoryResponse
    /// Sends the page's submissions and returns once acknowledged; nil for a dry run.
    var publish: (([AcceptedNotification]) async throws -> Void)?
    var intake = NotificationIntake()
    var clock: () -> Date = Date.init

    /// Runs from `checkpoint` to the end, saving after every page.
    func run(_ checkpoint: inout ReconcileCheckpoint, save: (ReconcileCheckpoint) throws -> Void,
             progress: inout ReconcileProgress) async throws {
        let span = max(1, request.endDate.timeIntervalSince(request.startDate))
        while checkpoint.position < environments.count {
            let environment = environments[checkpoint.position]
            let page = try await fetch(request, checkpoint.paginationToken, environment)
            var accepted: [AcceptedNotification] = []
            for item in page.items {
                switch intake.accept(Array(#"{"signedPayload":""#.utf8) + Array(item.signedPayload.utf8) + Array(#""}"#.utf8),
                                     receivedAt: clock()) {
                case .success(let notification): accepted.append(notification)
                case .failure: checkpoint.skipped += 1
                }
            }
            if let publish, !accepted.isEmpty { try await publish(accepted) }
            checkpoint.seen += page.items.count
            if publish != nil { checkpoint.published += accepted.count } else { checkpoint.skipped += accepted.count }
            checkpoint.pages += 1
            if page.hasMore, let token = page.paginationToken {
                checkpoint.paginationToken = token
            } else {
                checkpoint.position += 1
                checkpoint.paginationToken = nil
            }
            try save(checkpoint)
            let covered = accepted.compactMap(\.signedDate).max().map { $0.timeIntervalSince(request.startDate) / span }
            let within = checkpoint.paginationToken == nil ? 0 : min(1, max(0, covered ?? 0))
            progress.report(checkpoint, fraction: (Double(checkpoint.position) + within) / Double(environments.count))
        }
        checkpoint.finished = true
        try save(checkpoint)
    }
}
