import AppStore
import Foundation
import Pipeline
import Synchronization
import Testing
@testable import Receiptd

/// The reconciliation loop with Apple and Kafka stubbed: pages are republished as the receiver
/// would publish them, a crash mid-way resumes from the checkpoint file, a dry run sends nothing.
@Suite struct ReconcilerTests {
    static func payload(_ n: Int) -> String {
        func b64(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return b64(#"{"alg":"ES256"}"#) + "." + b64(#"{"notificationUUID":"u-\#(n)","signedDate":1800000000000,"data":{"bundleId":"com.example.game"}}"#)
            + "." + b64("signature")
    }

    /// Ten notifications in production, pages of three, tokens "p3", "p6", "p9"; fails once when `failAt` is asked.
    final class History: Sendable {
        let asked = Mutex<[String?]>([])
        let failAt: String?
        let failed = Mutex(false)
        init(failAt: String? = nil) { self.failAt = failAt }

        func page(_ token: String?, _ environment: AppStoreEnvironment) throws -> NotificationHistoryResponse {
            asked.withLock { $0.append(token) }
            if let failAt, token == failAt, !failed.withLock({ was in defer { was = true }; return was }) { throw CrashError() }
            guard environment == .production else { return NotificationHistoryResponse(items: [], hasMore: false, paginationToken: nil, environment: environment) }
            let start = token.map { Int($0.dropFirst())! } ?? 0
            let end = min(start + 3, 10)
            return NotificationHistoryResponse(items: (start..<end).map { .init(signedPayload: ReconcilerTests.payload($0)) },
                                               hasMore: end < 10, paginationToken: end < 10 ? "p\(end)" : nil, environment: environment)
        }
    }
    struct CrashError: Error {}

    /// What the stubbed producer acknowledged.
    final class Sent: Sendable {
        let records = Mutex<[AcceptedNotification]>([])
        var all: [AcceptedNotification] { records.withLock { $0 } }
    }

    func reconciler(_ history: History, published: Sent?) -> NotificationReconciler {
        let request = NotificationHistoryRequest(startDate: Date(timeIntervalSince1970: 1_700_000_000),
                                                 endDate: Date(timeIntervalSince1970: 1_900_000_000))
        return NotificationReconciler(environments: [.production, .sandbox], request: request,
                                      fetch: { _, token, environment in try history.page(token, environment) },
                                      publish: published.map { sent in { batch in sent.records.withLock { $0 += batch } } })
    }

    @Test func aCrashedRunResumesFromItsCheckpointAndRepublishesEverythingOnce() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reconcile-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let history = History(failAt: "p6")
        let published = Sent()
        var lines: [String] = []
        var progress = ReconcileProgress(label: "notifications")
        progress.write = { lines.append($0) }
        let parameters = ["mode": "notifications"]
        var first = try ReconcileCheckpoint.load(path, parameters: parameters)
        await #expect(throws: CrashError.self) {
            try await reconciler(history, published: published).run(&first, save: { try $0.save(path) }, progress: &progress)
        }
        #expect(published.all.count == 6)

        var resumed = try ReconcileCheckpoint.load(path, parameters: parameters)
        #expect(resumed.paginationToken == "p6" && resumed.published == 6 && !resumed.finished)
        try await reconciler(history, published: published).run(&resumed, save: { try $0.save(path) }, progress: &progress)
        #expect(resumed.finished && resumed.published == 10 && resumed.seen == 10)
        #expect(history.asked.withLock { $0 } == [nil, "p3", "p6", "p6", "p9", nil])
        let ids = published.all.map(\.submissionId)
        #expect(ids.count == 10 && Set(ids).count == 10)
        // Exactly the submission the receiver would have published for the same body.
        let receiver = try NotificationIntake().accept(Array(#"{"signedPayload":"\#(Self.payload(4))"}"#.utf8), receivedAt: Date()).get()
        #expect(published.all.contains { $0.submissionId == receiver.submissionId && $0.key == receiver.key })
        #expect(lines.contains { $0.contains("ETA") })
        #expect(throws: ValidationError.self) { try ReconcileCheckpoint.load(path, parameters: ["mode": "subscriptions"]) }
    }

    @Test func aDryRunPublishesNothing() async throws {
        var checkpoint = ReconcileCheckpoint(parameters: [:])
        var progress = ReconcileProgress(label: "notifications")
        progress.write = { _ in }
        try await reconciler(History(), published: nil).run(&checkpoint, save: { _ in }, progress: &progress)
        #expect(checkpoint.finished && checkpoint.seen == 10 && checkpoint.published == 0 && checkpoint.skipped == 10)
    }

    @Test func argumentsAreChecked() {
        #expect(throws: ValidationError.self) { try ReconcileCommand(arguments: ["notifications"]) }
        #expect(throws: ValidationError.self) { try ReconcileCommand(arguments: ["notifications", "--since", "yesterday"]) }
        #expect(throws: ValidationError.self) {
            try ReconcileCommand(arguments: ["notifications", "--since", "2026-12-01T00:00:00Z", "--until", "2026-11-01T00:00:00Z"])
        }
        #expect(throws: ValidationError.self) { try ReconcileCommand(arguments: ["subscriptions", "--only-failures"]) }
        #expect(throws: ValidationError.self) { try ReconcileCommand(arguments: ["everything"]) }
        #expect((try? ReconcileCommand(arguments: ["subscriptions", "--dry-run", "--rate", "2"]))?.rate == 2)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(ReconcileCommand.instant("-26h", now: now) == now.addingTimeInterval(-26 * 3600))
        #expect(ReconcileCommand.instant("-2d", now: now) == now.addingTimeInterval(-2 * 86_400))
        #expect(ReconcileCommand.instant("-5x", now: now) == nil)
        // A relative start is kept as written, so a restarted job (a later "now") still matches its checkpoint.
        #expect((try? ReconcileCommand(arguments: ["notifications", "--since", "-26h"]))?.parameters["since"] == "-26h")
    }
}
