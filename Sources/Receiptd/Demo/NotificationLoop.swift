import AppStore
import FakeAppStore
import Foundation
import Kafka
import Pipeline

/// The demo's last phase, Apple's side of the loop: subscribers buy through the app (their
/// submissions record the owners), Apple renews them, and the fake App Store pushes `DID_RENEW` to a
/// `receiptd notifications` process, retrying as Apple does; each must end as a renewal of its
/// owner's entitlement in `entitlements.changed`.
struct NotificationLoop {
    struct Result {
        var purchases = 0
        var pushed = 0
        var delivered = 0
        var renewalsApplied = 0
        var receiverStoppedCleanly = false
        var problems: [String] = []
        var passed: Bool {
            problems.isEmpty && purchases > 0 && delivered == pushed && renewalsApplied == pushed && receiverStoppedCleanly
        }
    }

    let harness: PipelineHarness
    let count: Int
    let timeout: Duration

    func run() async -> Result {
        var result = Result()
        do { try await run(into: &result) } catch { result.problems.append("\(error)") }
        return result
    }

    private func run(into result: inout Result) async throws {
        let fake = harness.appStore
        let topics = harness.configuration.topics
        let receiver = WorkerProcess(name: "notifications-1", arguments: ["notifications", "--config", harness.fleet.configPath,
                                                                          "--port", "0"],
                                     logPath: harness.directory + "/notifications-1.log", environment: harness.fleet.environment)
        try receiver.start()
        defer { receiver.send(SIGTERM) }
        var log = LogFollower(path: receiver.logPath)
        let url = try await Self.until(timeout, "the notification receiver printed no ready line") {
            log.newLines().first { $0.hasPrefix("ready url=") }.map { String($0.dropFirst("ready url=".count)) }
        }
        fake.setNotificationDelivery(FakeNotificationDelivery(receiverURL: url, retrySchedule: [.seconds(1), .seconds(2), .seconds(4)]))
        let events = fake.deliveryEvents()

        // The app's own submissions first: they record each purchase's owner.
        let now = Date()
        let producer = try harness.makeProducer()
        var purchases: [(owner: String, transaction: FakeTransaction)] = []
        for index in 0..<count {
            let transaction = fake.store.purchase(productId: "com.demo.monthly.sub", type: .autoRenewable, environment: .production,
                                                  purchaseDate: now.addingTimeInterval(-29 * 86_400), expiresDate: now.addingTimeInterval(86_400))
            purchases.append(("loop-\(index)", transaction))
        }
        let submissions = try purchases.enumerated().map { index, purchase in
            let submission = ReceiptSubmitted(submissionId: "loop-app-\(index)", userId: purchase.owner,
                                              bundleId: SubmissionGenerator.bundleId, kind: .signedTransaction,
                                              payload: try fake.signedTransaction(purchase.transaction), submittedAt: now)
            return KafkaProducerMessage(topic: topics.submitted, key: SubmissionGenerator.bundleId + "/" + purchase.owner,
                                        value: try ContractCoding.encode(submission))
        }
        _ = try await producer.sendAll(submissions)
        await producer.close()
        result.purchases = purchases.count
        let originals = Set(purchases.map(\.transaction.originalTransactionId))
        let changes = try EventCollector(bootstrap: [harness.broker.bootstrapServers], topic: topics.entitlements,
                                         partitions: harness.configuration.topics.partitions)
        defer { changes.close() }
        _ = try await Self.until(timeout, "the loop's purchases were not granted") {
            changes.events.filter { originals.contains($0.originalTransactionId) }.count >= purchases.count ? true : nil
        }

        // Apple renews them and tells receiptd only through its notifications.
        var uuids: Set<String> = []
        for purchase in purchases {
            let renewal = fake.store.renew(purchase.transaction, period: .seconds(30 * 86_400))
            uuids.insert(try fake.notify(FakeNotificationRequest(notificationType: "DID_RENEW", transaction: renewal)).notificationUUID)
        }
        result.pushed = uuids.count
        var ended: Set<String> = []
        let pending = uuids
        let deadline = ContinuousClock.now + timeout
        for await event in events {
            switch event {
            case .delivered(let uuid, _) where pending.contains(uuid): ended.insert(uuid); result.delivered += 1
            case .abandoned(let uuid, _) where pending.contains(uuid): ended.insert(uuid); result.problems.append("notification \(uuid) abandoned")
            default: break
            }
            if ended == pending || ContinuousClock.now > deadline { break }
        }
        let renewed = try await Self.until(timeout, "not every pushed renewal reached entitlements.changed") { () -> [EventCollector.Event]? in
            let renewals = changes.events.filter { originals.contains($0.originalTransactionId) && $0.notificationType == "DID_RENEW" }
            return renewals.count >= purchases.count ? renewals : nil
        }
        result.renewalsApplied = renewed.count
        let owners = Dictionary(uniqueKeysWithValues: purchases.map { ($0.transaction.originalTransactionId, $0.owner) })
        for event in renewed where owners[event.originalTransactionId] != event.userId || event.action != "renew" {
            result.problems.append("\(event.originalTransactionId): \(event.action) for \(event.userId), expected renew for "
                                   + (owners[event.originalTransactionId] ?? "?"))
        }
        receiver.send(SIGTERM)
        result.receiverStoppedCleanly = await receiver.waitForExit(timeout: .seconds(30)) == 0
    }

    /// Polls `probe` every 100 ms until it returns a value (a demo's progress wait, not a test).
    static func until<T>(_ timeout: Duration, _ failure: String, _ probe: () throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try probe() { return value }
            guard ContinuousClock.now < deadline else { throw ValidationError(failure) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// Reads every `entitlement-changed/v2` event of a topic from the beginning, in the background.
final class EventCollector: @unchecked Sendable {
    // @unchecked: `collected` is guarded by its lock; the rest is immutable.
    struct Event: Sendable {
        var originalTransactionId: String
        var userId: String
        var action: String
        var notificationType: String?
    }

    private let consumer: KafkaConsumer
    private let lock = NSLock()
    private var collected: [Event] = []
    private var task: Task<Void, Never>?

    init(bootstrap: [String], topic: String, partitions: Int) throws {
        consumer = try KafkaConsumer(configuration: KafkaConsumerConfiguration(
            bootstrapServers: bootstrap,
            consumptionStrategy: .partitions((0..<Int32(partitions)).map { .beginning(topic: topic, partition: $0) })))
        let consumer = self.consumer
        task = Task { [weak self] in
            do {
                for try await message in consumer.messages {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any],
                          let original = object["originalTransactionId"] as? String else { continue }
                    let event = Event(originalTransactionId: original, userId: object["userId"] as? String ?? "",
                                      action: object["action"] as? String ?? "", notificationType: object["notificationType"] as? String)
                    self?.lock.withLock { self?.collected.append(event) }
                }
            } catch {}
        }
    }

    var events: [Event] { lock.withLock { collected } }

    func close() {
        task?.cancel()
        let consumer = self.consumer
        Task { await consumer.close() }
    }
}
