import AppStore
import FakeAppStore
import Foundation
import HTTP
import Kafka
import Pipeline
import Testing

/// `receiptd notifications` between the fake App Store (pushing over real HTTP, retrying as Apple
/// does) and the embedded broker, with ingest, verify and fulfil running behind it.
@Suite(.timeLimit(.minutes(3))) struct NotificationReceiverTests {
    /// A short publish timeout, so the broker-down attempt fails quickly, yet long enough for a loaded machine.
    static let overlay = #"{"notifications": {"publishTimeoutSeconds": 5}, "topics": {"create": false}}"#
    static let directory = FileManager.default.temporaryDirectory

    /// A fake App Store that pushes to nothing yet, retrying production notifications quickly.
    static func fakeAppStore() throws -> FakeAppStore {
        var configuration = FakeAppStoreConfiguration(bundleId: Samples.bundleId, credentials: try FakeAppStoreCredentials.generate())
        configuration.notificationDelivery = FakeNotificationDelivery(
            receiverURL: nil, retrySchedule: [.seconds(1), .seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        return try FakeAppStore(configuration: configuration)
    }

    /// A subscription whose app set `appAccountToken`, so fulfil can name its owner from a notification alone.
    static func subscription(_ fake: FakeAppStore) -> FakeTransaction {
        let now = Date()
        var transaction = fake.store.purchase(productId: "com.demo.monthly.sub", type: .autoRenewable, environment: .production,
                                              purchaseDate: now.addingTimeInterval(-3600), expiresDate: now.addingTimeInterval(30 * 86_400))
        transaction.appAccountToken = UUID().uuidString.lowercased()
        fake.store.add(transaction)
        return transaction
    }

    /// Waits for `count` delivery events `matching`, within `timeout`, in the order they come (the
    /// fake delivers notifications concurrently, and a stream's events are consumed once read, so
    /// waiting for them one after the other would miss one that came first).
    static func collect(_ events: AsyncStream<FakeDeliveryEvent>, count: Int, within timeout: Duration = .seconds(60),
                        _ matching: @escaping @Sendable (FakeDeliveryEvent) -> Bool) async throws -> [FakeDeliveryEvent] {
        let found = await DevCommandTests.within(timeout) { () -> [FakeDeliveryEvent] in
            var found: [FakeDeliveryEvent] = []
            for await event in events where matching(event) {
                found.append(event)
                if found.count == count { break }
            }
            return found
        }
        return try #require(found, "not \(count) matching delivery events within \(timeout)")
    }

    /// Waits for the first delivery event `matching`, within `timeout`.
    static func next(_ events: AsyncStream<FakeDeliveryEvent>, within timeout: Duration = .seconds(60),
                     _ matching: @escaping @Sendable (FakeDeliveryEvent) -> Bool) async throws -> FakeDeliveryEvent {
        let found = await DevCommandTests.within(timeout) { await events.first(where: matching) }
        return try #require(found ?? nil, "no matching delivery event within \(timeout)")
    }

    @Test func notificationDeliveredWhileTheBrokerIsDownIsRetriedByTheFakeAndLandsOnce() async throws {
        let broker = try BrokerFixture()
        let fake = try Self.fakeAppStore()
        defer { fake.stop() }
        let receiver = try ReceiverProcess(brokers: broker.bootstrap[0], overlay: Self.overlay, in: Self.directory)
        try await receiver.start()
        defer { receiver.stop() }
        var delivery = fake.notificationDelivery
        delivery.receiverURL = receiver.url
        fake.setNotificationDelivery(delivery)
        let transaction = Self.subscription(fake)
        let events = fake.deliveryEvents()

        broker.cluster.setBrokerDown(1)
        let notification = try fake.notify(FakeNotificationRequest(notificationType: "SUBSCRIBED", subtype: "INITIAL_BUY",
                                                                   transaction: transaction))
        let uuid = notification.notificationUUID
        let refused = try await Self.next(events) { if case .attempted(uuid, 1, _, _) = $0 { true } else { false } }
        #expect(refused == .attempted(uuid: uuid, attempt: 1, result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE", status: 503))
        broker.cluster.setBrokerUp(1)
        let delivered = try await Self.next(events) { if case .delivered(uuid, _) = $0 { true } else { false } }
        guard case .delivered(_, let attempts) = delivered else { return }
        #expect(attempts >= 2)

        // Apple re-sending a notification it already delivered (its retries can overlap a slow 200).
        let again = try await CurlHTTPClient().execute(HTTPRequest(method: .post, url: receiver.url, body: notification.body),
                                                       timeout: .seconds(30))
        #expect(again.status == 200)

        let pipeline = try NotificationPipeline(broker: broker, fake: fake)
        let reader = try broker.reader([broker.topics.submitted, broker.topics.entitlementsChanged, broker.topics.outcomes,
                                        broker.topics.rejected, broker.topics.deadLetter])
        try await pipeline.run {
            // Both copies reached a verdict: one event, and the repeat suppressed.
            try await reader.wait { messages in
                messages.contains { $0.topic == broker.topics.outcomes && $0.json["outcome"] as? String == "duplicate-suppressed" }
            }
        }
        await reader.close()
        let submitted = reader.messages(in: broker.topics.submitted)
        #expect(submitted.count == 2)
        #expect(Set(submitted.map { $0.json["submissionId"] as? String }).count == 1)
        #expect(submitted.allSatisfy { $0.json["userId"] == nil && $0.json["kind"] as? String == "serverNotification" })
        let changes = reader.messages(in: broker.topics.entitlementsChanged)
        #expect(changes.count == 1)
        #expect(changes.first?.json["originalTransactionId"] as? String == transaction.originalTransactionId)
        #expect(changes.first?.json["userId"] as? String == transaction.appAccountToken)
        #expect(changes.first?.json["notificationType"] as? String == "SUBSCRIBED")
        #expect(reader.messages(in: broker.topics.rejected).isEmpty)
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
    }

    @Test func malformedBodyGets400WithItsReasonAndNothingIsPublished() async throws {
        let broker = try BrokerFixture()
        let receiver = try ReceiverProcess(brokers: broker.bootstrap[0], overlay: Self.overlay, in: Self.directory)
        try await receiver.start()
        defer { receiver.stop() }
        let http = try CurlHTTPClient()
        func post(_ body: String) async throws -> HTTPResponse {
            try await http.execute(HTTPRequest(method: .post, url: receiver.url, body: Array(body.utf8)), timeout: .seconds(30))
        }
        let cases = [("{\"signedPayload\": 12}", "missing-signed-payload"), ("not json", "invalid-json"),
                     ("{\"signedPayload\": \"a.b\"}", "malformed-jws")]
        for (body, reason) in cases {
            let response = try await post(body)
            #expect(response.status == 400)
            let problem = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
            #expect(problem?["error"] == reason)
        }
        let tooLarge = try await post("{\"signedPayload\": \"" + String(repeating: "a", count: 70_000) + "\"}")
        #expect(tooLarge.status == 413)

        // A well-formed one afterwards is the only record: the refused ones published nothing.
        let fake = try Self.fakeAppStore()
        defer { fake.stop() }
        let sentinel = try fake.notify(FakeNotificationRequest(notificationType: "TEST", environment: .sandbox))
        #expect(try await post(String(decoding: sentinel.body, as: UTF8.self)).status == 200)
        let reader = try broker.reader([broker.topics.submitted])
        try await reader.waitUntilCaughtUp([broker.topics.submitted])
        await reader.close()
        #expect(reader.messages.count == 1)
        #expect(reader.messages.first?.json["payload"] as? String == sentinel.signedPayload)
        let health = try await http.execute(HTTPRequest(url: receiver.url.replacingOccurrences(of: "/appstore/notifications", with: "/health")),
                                            timeout: .seconds(10))
        #expect(health.status == 200)
    }
}

/// Ingest, verify (trusting the fake's PKI) and fulfil (owners named by `appAccountToken`) as
/// in-process runners on the fixture's broker.
struct NotificationPipeline {
    let ingest: KafkaStageWorker<IngestStage>
    let verify: KafkaStageWorker<VerifyStage>
    let fulfil: KafkaStageWorker<FulfilStage>

    init(broker: BrokerFixture, fake: FakeAppStore, suffix: String = UUID().uuidString.prefix(6).description,
         consumptionRequests: Bool = false) throws {
        ingest = try broker.runner(IngestStage(), group: "n-ingest-\(suffix)")
        let verifier = try SignedDataVerifier(configuration: fake.verifierConfiguration())
        verify = try broker.runner(VerifyStage(verifier: AppStoreSubmissionVerifier(verifier: verifier)), group: "n-verify-\(suffix)")
        let ledger = broker.purchaseLedger()
        fulfil = try broker.runner(FulfilStage(catalogue: try BrokerFixture.catalogue(),
                                               policy: FulfilmentPolicy(appAccountToken: .userIdIsToken), ledger: ledger,
                                               publishConsumptionRequests: consumptionRequests),
                                   group: "n-fulfil-\(suffix)", assignmentHook: ledger)
    }

    /// Runs the three (and `alongside`, other runners) until `until` returns, then stops them gracefully.
    func run(alongside: [any RunnableStage] = [], until: @escaping @Sendable () async throws -> Void) async throws {
        let runners: [any RunnableStage] = [ingest, verify, fulfil] + alongside
        try await withThrowingTaskGroup(of: Void.self) { group in
            for runner in runners { group.addTask { try await runner.run() } }
            do { try await until() } catch {
                for runner in runners { runner.shutdownGracefully() }
                try? await group.waitForAll()
                throw error
            }
            for runner in runners { runner.shutdownGracefully() }
            try await group.waitForAll()
        }
    }
}

/// A stage worker of any stage, as the pipeline helper runs them side by side.
protocol RunnableStage: Sendable {
    func run() async throws
    func shutdownGracefully()
}

extension KafkaStageWorker: RunnableStage {}
