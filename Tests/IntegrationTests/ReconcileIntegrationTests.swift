import AppStore
import FakeAppStore
import Foundation
import Kafka
import Pipeline
import Testing

/// `receiptd reconcile notifications` against the fake App Store over real HTTP: notifications the
/// fake gave up on while the receiver was down come back through Get Notification History, and
/// republishing ones that had arrived changes nothing twice.
@Suite(.timeLimit(.minutes(3))) struct ReconcileIntegrationTests {
    /// Runs `receiptd` with `arguments` to its end.
    static func receiptd(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CrashRestartTests.binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RECEIPTD_") }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let (exits, exited) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exited.yield($0.terminationStatus); exited.finish() }
        try process.run()
        async let out = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        async let err = Task.detached { errors.fileHandleForReading.readDataToEndOfFile() }.value
        let status = await DevCommandTests.within(.seconds(90)) { await exits.first { _ in true } }
        if status == nil { process.terminate() }
        let (o, e) = await (out, err)
        return (try #require(status ?? nil, "receiptd \(arguments.first ?? "") did not end"), String(decoding: o, as: UTF8.self),
                String(decoding: e, as: UTF8.self))
    }

    @Test func reconciliationAfterAReceiverOutageRecoversEveryMissedNotificationAndChangesNothingTwice() async throws {
        let broker = try BrokerFixture()
        let directory = try scratchDirectory("reconcile")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = try NotificationReceiverTests.fakeAppStore()
        defer { fake.stop() }
        let start = Date().addingTimeInterval(-60)
        let receiver = try ReceiverProcess(brokers: broker.bootstrap[0], overlay: NotificationReceiverTests.overlay, in: directory)
        try await receiver.start()
        fake.setNotificationDelivery(FakeNotificationDelivery(receiverURL: receiver.url, retrySchedule: [.seconds(1), .seconds(2)]))
        let events = fake.deliveryEvents()
        let purchases = (0..<3).map { _ in NotificationReceiverTests.subscription(fake) }
        func subscribed(_ transaction: FakeTransaction) throws -> FakeNotification {
            try fake.notify(FakeNotificationRequest(notificationType: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: transaction))
        }

        let first = try subscribed(purchases[0])
        _ = try await NotificationReceiverTests.next(events) { if case .delivered(first.notificationUUID, _) = $0 { true } else { false } }
        receiver.stop()
        // During the outage Apple gives up at once (no retries), so the outage loses notifications for good.
        fake.setNotificationDelivery(FakeNotificationDelivery(receiverURL: receiver.url, retrySchedule: []))
        let missed = try purchases[1...].map(subscribed)
        let uuids = Set(missed.map(\.notificationUUID))
        let ends = try await NotificationReceiverTests.collect(events, count: missed.count) {
            if case .abandoned(let uuid, _) = $0 { uuids.contains(uuid) } else { false }
        }
        #expect(ends.count == missed.count
                && missed.allSatisfy { ends.contains(.abandoned(uuid: $0.notificationUUID, attempts: 1)) }, "\(ends)")
        #expect(fake.sentNotifications.filter { !$0.delivered }.count == 2)

        let overlay = try Self.overlay(fake, in: directory)
        let common = ["--since", ContractCoding.timestamp(start), "--until", ContractCoding.timestamp(Date().addingTimeInterval(60)),
                      "--brokers", broker.bootstrap[0], "--config", overlay, "--rate", "20"]
        let everything = try await Self.receiptd(["reconcile", "notifications"] + common
                                                 + ["--checkpoint", directory.appendingPathComponent("all.json").path])
        try #require(everything.status == 0, "\(everything.errors)")
        #expect(everything.output.contains("published           3"), "\(everything.output)")
        #expect(everything.errors.contains("reconcile notifications: pages 1"))
        let failures = try await Self.receiptd(["reconcile", "notifications", "--only-failures"] + common)
        try #require(failures.status == 0, "\(failures.errors)")
        #expect(failures.output.contains("published           2"), "\(failures.output)")

        // 1 delivered + 3 + 2 republished: every one reaches a verdict.
        let reader = try broker.reader([broker.topics.submitted, broker.topics.entitlementsChanged, broker.topics.outcomes,
                                        broker.topics.rejected, broker.topics.deadLetter])
        let verdictTopics = [broker.topics.entitlementsChanged, broker.topics.outcomes, broker.topics.rejected, broker.topics.deadLetter]
        let pipeline = try NotificationPipeline(broker: broker, fake: fake)
        try await pipeline.run {
            try await reader.wait(timeout: .seconds(90)) { messages in
                messages.filter { verdictTopics.contains($0.topic) }.count >= 6
            }
        }
        await reader.close()
        #expect(reader.messages(in: broker.topics.submitted).count == 6)
        let changes = reader.messages(in: broker.topics.entitlementsChanged)
        #expect(changes.compactMap { $0.json["originalTransactionId"] as? String }.sorted()
                == purchases.map(\.originalTransactionId).sorted(), "one change per purchase, the missed ones included")
        let outcomes = reader.messages(in: broker.topics.outcomes).compactMap { $0.json["outcome"] as? String }
        #expect(outcomes == Array(repeating: "duplicate-suppressed", count: 3))
        #expect(reader.messages(in: broker.topics.rejected).isEmpty && reader.messages(in: broker.topics.deadLetter).isEmpty)
    }

    /// The reconcile process's configuration: the fake App Store's API key, production only.
    static func overlay(_ fake: FakeAppStore, in directory: URL) throws -> String {
        let files = try fake.configuration.credentials.write(to: directory.path)
        let overlay = directory.appendingPathComponent("reconcile.json").path
        let settings: [String: Any] = [
            "topics": ["create": false],
            "verify": ["environment": "production", "serverApi": [
                "keyPath": files.signingKey, "keyId": fake.configuration.credentials.keyId,
                "issuerId": fake.configuration.credentials.issuerId, "bundleId": Samples.bundleId,
                "productionBaseURL": fake.productionBaseURL, "sandboxBaseURL": fake.sandboxBaseURL,
            ]],
        ]
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: overlay))
        return overlay
    }

    @Test func subscriptionReconciliationCorrectsDriftAndChangesNothingTwice() async throws {
        let broker = try BrokerFixture()
        let directory = try scratchDirectory("reconcile")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = try NotificationReceiverTests.fakeAppStore()
        defer { fake.stop() }
        let now = Date()
        let original = fake.store.purchase(productId: "com.demo.monthly.sub", type: .autoRenewable, environment: .production,
                                           purchaseDate: now.addingTimeInterval(-31 * 86_400), expiresDate: now.addingTimeInterval(-3600))
        let list = directory.appendingPathComponent("subscriptions.txt").path
        try "# originalTransactionId userId\n\(original.originalTransactionId) player-42\n".write(toFile: list, atomically: true, encoding: .utf8)
        let arguments = ["reconcile", "subscriptions", "--transactions", list, "--brokers", broker.bootstrap[0],
                         "--config", try Self.overlay(fake, in: directory)]

        let dry = try await Self.receiptd(arguments + ["--dry-run"])
        try #require(dry.status == 0, "\(dry.errors)")
        #expect(dry.output.contains("seen                1") && dry.output.contains("published           0"), "\(dry.output)")
        let first = try await Self.receiptd(arguments)
        try #require(first.status == 0, "\(first.errors)")
        // Apple renewed it and receiptd never heard (a lost DID_RENEW): the next run finds the drift ...
        let renewal = fake.store.renew(original, period: .seconds(30 * 86_400))
        let second = try await Self.receiptd(arguments)
        try #require(second.status == 0, "\(second.errors)")
        // ... and a run with nothing new changes nothing.
        let third = try await Self.receiptd(arguments)
        try #require(third.status == 0, "\(third.errors)")
        for run in [first, second, third] { #expect(run.output.contains("published           1"), "\(run.output)") }

        let reader = try broker.reader([broker.topics.submitted, broker.topics.entitlementsChanged, broker.topics.outcomes,
                                        broker.topics.rejected, broker.topics.deadLetter])
        let verdictTopics = [broker.topics.entitlementsChanged, broker.topics.outcomes, broker.topics.rejected, broker.topics.deadLetter]
        try await NotificationPipeline(broker: broker, fake: fake).run {
            try await reader.wait(timeout: .seconds(90)) { $0.filter { verdictTopics.contains($0.topic) }.count >= 3 }
        }
        await reader.close()
        let changes = reader.messages(in: broker.topics.entitlementsChanged)
        #expect(changes.map { $0.json["transactionId"] as? String } == [original.transactionId, renewal.transactionId])
        #expect(changes.allSatisfy { $0.json["userId"] as? String == "player-42" })
        #expect(changes.last?.json["hasAccess"] as? Bool == true, "the renewal restored access")
        #expect(reader.messages(in: broker.topics.outcomes).count == 1)
        #expect(reader.messages(in: broker.topics.rejected).isEmpty && reader.messages(in: broker.topics.deadLetter).isEmpty)
    }

    @Test func subscriptionReconciliationAsksAboutEveryPurchaseOfTheOwnerView() async throws {
        let broker = try BrokerFixture()
        let directory = try scratchDirectory("reconcile")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = try NotificationReceiverTests.fakeAppStore()
        defer { fake.stop() }
        let now = Date()
        let subscription = fake.store.purchase(productId: "com.demo.monthly.sub", type: .autoRenewable, environment: .production,
                                               purchaseDate: now.addingTimeInterval(-31 * 86_400), expiresDate: now.addingTimeInterval(-3600))
        let coins = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production, purchaseDate: now)
        let samples = try Samples()
        // The app submitted both purchases: fulfil records them and the owner view lists them.
        try await broker.publish(broker.topics.submitted, [
            samples.submission("app-1", user: "player-7", payload: try fake.signedTransaction(subscription)),
            samples.submission("app-2", user: "player-7", payload: try fake.signedTransaction(coins)),
        ])
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.entitlementState, broker.topics.outcomes,
                                        broker.topics.rejected, broker.topics.deadLetter])
        let owners = try broker.ownersRunner(group: "reconcile-owners")
        try await NotificationPipeline(broker: broker, fake: fake).run(alongside: [owners]) {
            try await reader.wait(timeout: .seconds(90)) { $0.filter { $0.topic == broker.topics.entitlementState }.count >= 2 }
        }

        // Apple renewed the subscription; nothing told receiptd. No list given: the owner view is the list.
        let renewal = fake.store.renew(subscription, period: .seconds(30 * 86_400))
        let run = try await Self.receiptd(["reconcile", "subscriptions", "--brokers", broker.bootstrap[0],
                                           "--config", try Self.overlay(fake, in: directory)])
        try #require(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("pages or purchases  1"), "only the auto-renewable purchase is asked about: \(run.output)")
        #expect(run.output.contains("published           1"), "\(run.output)")
        try await NotificationPipeline(broker: broker, fake: fake).run {
            try await reader.wait(timeout: .seconds(90)) { messages in
                messages.contains { $0.topic == broker.topics.entitlementsChanged && $0.json["transactionId"] as? String == renewal.transactionId }
            }
        }
        await reader.close()
        let renewed = reader.messages(in: broker.topics.entitlementsChanged).filter { $0.json["transactionId"] as? String == renewal.transactionId }
        #expect(renewed.count == 1 && renewed.first?.json["userId"] as? String == "player-7")
        #expect(reader.messages(in: broker.topics.rejected).isEmpty && reader.messages(in: broker.topics.deadLetter).isEmpty)
    }
}
