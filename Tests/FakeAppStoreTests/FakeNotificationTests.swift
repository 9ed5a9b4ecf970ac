import AppStore
import FakeAppStore
import Foundation
import HTTP
import Synchronization
import Testing

/// The fake's notification side through the real Server API client: delivery with Apple's retries
/// (compressed), Get Notification History with filters and pages, Send Consumption Information.
@Suite struct FakeNotificationTests {
    @Test func deliveryRetriesUntilA2xxAndHistoryRecordsEveryAttempt() async throws {
        try await FakeHarness.with(historyPageSize: 2) { harness in
            let answers = AnswerScript([503, 500, 200])
            let receiver = try HTTPServer(configuration: .init()) { _ in HTTPServerResponse(status: answers.next()) }
            defer { receiver.stop() }
            harness.fake.setNotificationDelivery(FakeNotificationDelivery(
                receiverURL: "http://127.0.0.1:\(receiver.port)/n", retrySchedule: [.milliseconds(50), .milliseconds(50)]))
            let events = harness.fake.deliveryEvents()
            let transaction = harness.subscription(.production)
            let sent = try harness.fake.notify(FakeNotificationRequest(notificationType: "DID_RENEW", transaction: transaction))
            let end = await events.first { if case .delivered = $0 { true } else if case .abandoned = $0 { true } else { false } }
            #expect(end == .delivered(uuid: sent.notificationUUID, attempts: 3))

            // The signed payload verifies as a notification of this app.
            let decoded = try harness.verifier.verifyAndDecodeNotification(sent.signedPayload).get()
            #expect(decoded.rawNotificationType == "DID_RENEW")

            let start = Date().addingTimeInterval(-60), endDate = Date().addingTimeInterval(60)
            harness.fake.setNotificationDelivery(FakeNotificationDelivery(receiverURL: nil))   // recorded, never sent
            for _ in 0..<3 { try harness.fake.notify(FakeNotificationRequest(notificationType: "TEST", environment: .production)) }
            var page = try await harness.api.getNotificationHistory(NotificationHistoryRequest(startDate: start, endDate: endDate),
                                                                    environment: .production)
            var items = page.items
            while page.hasMore {
                page = try await harness.api.getNotificationHistory(NotificationHistoryRequest(startDate: start, endDate: endDate),
                                                                    paginationToken: page.paginationToken, environment: .production)
                items += page.items
            }
            #expect(items.count == 4)
            #expect(items.first?.sendAttempts.map(\.result) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"])
            let failures = try await harness.api.getNotificationHistory(
                NotificationHistoryRequest(startDate: start, endDate: endDate, onlyFailures: true), environment: .production)
            #expect(failures.items.count == 2 && failures.hasMore, "the three TEST notifications were never delivered")
            let byTransaction = try await harness.api.getNotificationHistory(
                NotificationHistoryRequest(startDate: start, endDate: endDate, transactionId: transaction.transactionId),
                environment: .production)
            #expect(byTransaction.items.map(\.signedPayload) == [sent.signedPayload])
            let sandbox = try await harness.api.getNotificationHistory(NotificationHistoryRequest(startDate: start, endDate: endDate),
                                                                       environment: .sandbox)
            #expect(sandbox.items.isEmpty)
        }
    }

    @Test func sandboxNotificationsAreTriedOnce() async throws {
        try await FakeHarness.with { harness in
            let receiver = try HTTPServer(configuration: .init()) { _ in HTTPServerResponse(status: 500) }
            defer { receiver.stop() }
            harness.fake.setNotificationDelivery(FakeNotificationDelivery(
                receiverURL: "http://127.0.0.1:\(receiver.port)/n", retrySchedule: [.milliseconds(10)]))
            let events = harness.fake.deliveryEvents()
            let sent = try harness.fake.notify(FakeNotificationRequest(notificationType: "TEST", environment: .sandbox))
            let end = await events.first { if case .abandoned = $0 { true } else { false } }
            #expect(end == .abandoned(uuid: sent.notificationUUID, attempts: 1))
        }
    }

    @Test func consumptionInformationIsCheckedAndKept() async throws {
        try await FakeHarness.with { harness in
            let purchase = harness.fake.store.purchase(productId: "com.example.fake.coins", type: .consumable, environment: .production,
                                                       purchaseDate: Date())
            var fields: [String: Any] = [
                "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false,
                "deliveryStatus": 0, "appAccountToken": "", "accountTenure": 3, "playTime": 2, "lifetimeDollarsRefunded": 0,
                "lifetimeDollarsPurchased": 2, "userStatus": 1,
            ]
            let body = { Array(try JSONSerialization.data(withJSONObject: fields)) }
            try await harness.api.sendConsumptionInformation(transactionId: purchase.transactionId, body: try body(),
                                                             environment: .production)
            #expect(harness.fake.consumptionReports.map(\.transactionId) == [purchase.transactionId])
            #expect(harness.fake.consumptionReports.first?.fields["consumptionStatus"] == "1")

            fields["customerConsented"] = false
            let refused = await failure(AppStoreServerAPIError.self) {
                try await harness.api.sendConsumptionInformation(transactionId: purchase.transactionId, body: try body(),
                                                                 environment: .production)
            }
            #expect(refused?.httpStatus == 400)
            let unknown = await failure(AppStoreServerAPIError.self) {
                try await harness.api.sendConsumptionInformation(transactionId: "999", body: try body(), environment: .production)
            }
            #expect(unknown?.httpStatus == 404)
            #expect(harness.fake.consumptionReports.count == 1)
        }
    }
}

/// Status codes handed out in order (the last one repeats).
final class AnswerScript: Sendable {
    private let answers: [Int]
    private let index = Mutex(0)
    init(_ answers: [Int]) { self.answers = answers }
    func next() -> Int { index.withLock { i in defer { i += 1 }; return answers[min(i, answers.count - 1)] } }
}
