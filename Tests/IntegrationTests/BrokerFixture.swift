import AppStore
import Foundation
import Kafka
import Observability
import Pipeline
import Synchronization

/// One embedded broker (librdkafka's mock cluster, in this process) with the pipeline's topics,
/// plus helpers to run stage runners on it and to read what they produced.
///
/// Each test makes its own fixture, so tests never share topics, groups or offsets.
final class BrokerFixture: Sendable {
    static let partitions = 8
    /// Retry tiers created for each stage input.
    static let retryTiers = 3
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    let cluster: KafkaMockCluster
    let topics = Topics()
    var bootstrap: [String] { [cluster.bootstrapServers] }

    init() throws {
        cluster = try KafkaMockCluster()
        for name in topics.allNames(retryTiers: Self.retryTiers) {
            try cluster.createTopic(name: name, partitions: Self.partitions)
        }
    }

    deinit { cluster.close() }

    /// The demo catalogue shipped in `Config/`.
    static func catalogue() throws -> ProductCatalogue {
        try ProductCatalogue(contentsOfFile: repository.appendingPathComponent("Config/catalogue.json").path)
    }

    func producer() throws -> KafkaProducer {
        try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: bootstrap))
    }

    /// Publishes values to `topic` with the given keys.
    @discardableResult
    func publish(_ topic: String, _ records: [(key: String, value: [UInt8])]) async throws -> [KafkaDeliveryReport] {
        let producer = try producer()
        let reports = try await producer.sendAll(records.map { KafkaProducerMessage(topic: topic, key: Array($0.key.utf8), value: $0.value) })
        await producer.close()
        return reports
    }

    /// Fulfil's purchase ledger kept in this broker's `entitlements.changed` (the production ledger).
    func purchaseLedger() -> KeyedStateStore<PurchaseState> {
        .purchaseLedger(reader: KafkaPartitionLogReader(bootstrapServers: bootstrap, idleTimeout: .seconds(10)),
                        topic: topics.entitlementsChanged, logger: .disabled)
    }

    /// A fulfil runner on this broker with the Kafka-backed purchase ledger wired in as its assignment hook.
    func fulfilRunner(group: String, metrics: MetricsRegistry = MetricsRegistry(), maxInFlight: Int = 64)
        throws -> KafkaStageWorker<FulfilStage> {
        let ledger = purchaseLedger()
        return try runner(FulfilStage(catalogue: try Self.catalogue(), ledger: ledger), group: group, metrics: metrics,
                          maxInFlight: maxInFlight, assignmentHook: ledger)
    }

    /// An owner-view runner on this broker with its store kept in `entitlements.state` (the production store).
    func ownersRunner(group: String, metrics: MetricsRegistry = MetricsRegistry())
        throws -> KafkaStageWorker<OwnersStage> {
        let store = KeyedStateStore.ownerView(reader: KafkaPartitionLogReader(bootstrapServers: bootstrap, idleTimeout: .seconds(10)),
                                              topic: topics.entitlementState, logger: .disabled)
        return try runner(OwnersStage(store: store), group: group, metrics: metrics, assignmentHook: store)
    }

    /// A stage worker on this broker, in consumer group `group`, reading its input and, with
    /// `retryDelays`, that many retry tiers (a tiered policy with those delays; else no retries):
    /// the production wiring (``KafkaStageWorker``), whose `run()` also closes producer and consumer.
    func runner<S: Stage>(_ stage: S, group: String, metrics: MetricsRegistry = MetricsRegistry(), maxInFlight: Int = 64,
                          retryDelays: [Duration] = [], clock: any WallClock = SystemWallClock(),
                          assignmentHook: (any PartitionAssignmentHook)? = nil) throws -> KafkaStageWorker<S> {
        let subscription = topics.inputs(of: S.name, retryTiers: retryDelays.count)
        var consumer = KafkaConsumerConfiguration(bootstrapServers: bootstrap,
                                                  consumptionStrategy: .group(id: group, topics: subscription))
        consumer.autoCommitInterval = .milliseconds(200)
        consumer.sessionTimeout = .seconds(10)
        // As the embedded broker sets its workers (`receiptd broker`): the mock hands a revoked
        // member's partitions on after a session less a second, so a revocation drains no longer.
        consumer.rebalanceTimeout = consumer.sessionTimeout - .seconds(1)
        consumer.heartbeatInterval = consumer.sessionTimeout / 10
        let configuration = StageRunnerConfiguration(topics: topics, maxInFlight: maxInFlight, shutdownGracePeriod: .seconds(10))
        let policy: any RetryPolicy = retryDelays.isEmpty ? .never : TieredRetryPolicy(delays: retryDelays, clock: { clock.now() })
        return try KafkaStageWorker(stage: stage, consumer: consumer, producer: KafkaProducerConfiguration(bootstrapServers: bootstrap),
                                    configuration: configuration, retryPolicy: policy, assignmentHook: assignmentHook,
                                    logger: .disabled, metrics: metrics, clock: clock)
    }

    /// Reads every partition of `topics` from the beginning (explicit assignment, no group).
    func reader(_ names: [String]) throws -> TopicReader {
        try TopicReader(bootstrap: bootstrap, topics: names, partitions: Self.partitions)
    }
}

/// Collects every record of some topics, for assertions.
final class TopicReader: Sendable {
    private final class Box: Sendable {
        let messages = Mutex<[KafkaConsumerMessage]>([])
    }

    private let consumer: KafkaConsumer
    private let collected = Box()
    private let task: Task<Void, Never>
    private let partitions: Int

    init(bootstrap: [String], topics: [String], partitions: Int) throws {
        let assignment = topics.flatMap { topic in
            (0..<partitions).map { KafkaTopicPartitionOffset.beginning(topic: topic, partition: Int32($0)) }
        }
        consumer = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: bootstrap,
                                                                               consumptionStrategy: .partitions(assignment)))
        self.partitions = partitions
        let consumer = self.consumer
        let collected = self.collected
        task = Task {
            do {
                for try await message in consumer.messages { collected.messages.withLock { $0.append(message) } }
            } catch {}
        }
    }

    var messages: [KafkaConsumerMessage] { collected.messages.withLock { $0 } }

    func messages(in topic: String) -> [KafkaConsumerMessage] { messages.filter { $0.topic == topic } }

    /// Waits until `condition` holds over the collected messages, polling without sleeping long.
    func wait(timeout: Duration = .seconds(60), until condition: ([KafkaConsumerMessage]) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(messages) {
            guard ContinuousClock.now < deadline else {
                throw TimeoutError(description: "condition not met within \(timeout); \(messages.count) messages read")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits until every partition of `topics` has been read up to the end it has now (so nothing
    /// written before this call is still missing from ``messages``).
    func waitUntilCaughtUp(_ topics: [String], timeout: Duration = .seconds(30)) async throws {
        var ends: [String: [Int32: Int64]] = [:]
        for topic in topics {
            for p in 0..<Int32(partitions) { ends[topic, default: [:]][p] = try await consumer.watermarks(topic: topic, partition: p).high }
        }
        try await wait(timeout: timeout) { messages in
            var next: [String: [Int32: Int64]] = [:]
            for message in messages where ends[message.topic] != nil {
                next[message.topic, default: [:]][message.partition] = max(next[message.topic]?[message.partition] ?? 0,
                                                                           message.offset + 1)
            }
            return ends.allSatisfy { topic, partitions in
                partitions.allSatisfy { p, end in end == 0 || (next[topic]?[p] ?? 0) >= end }
            }
        }
    }

    func close() async {
        task.cancel()
        await consumer.close()
    }
}

struct TimeoutError: Error, CustomStringConvertible { var description: String }

extension KafkaConsumerMessage {
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(value))) as? [String: Any] ?? [:] }
    func header(_ name: String) -> String? {
        headers.last { $0.key == name }?.value.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Builds signed submissions and verified records for the tests.
struct Samples {
    static let bundleId = "com.demo.game"
    let pki: TestPKI
    let forger: TestPKI
    let now = Date()

    init() throws {
        let now = Date()
        pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400 * 30))
        forger = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400 * 30))
    }

    func verifier() throws -> SignedDataVerifier {
        var configuration = SignedDataVerifierConfiguration(trustAnchors: [pki.root])
        configuration.environment = .any
        configuration.bundleIds = [Self.bundleId]
        return try SignedDataVerifier(configuration: configuration)
    }

    /// A transaction payload as Apple signs it.
    func transaction(_ id: Int, product: String = "com.demo.coins.100", type: String = "Consumable") -> [UInt8] {
        let ms = Int64(now.timeIntervalSince1970 * 1000)
        let object: [String: Any] = [
            "transactionId": String(id), "originalTransactionId": String(id), "bundleId": Self.bundleId,
            "productId": product, "purchaseDate": ms - 60_000, "originalPurchaseDate": ms - 60_000, "quantity": 1,
            "type": type, "inAppOwnershipType": "PURCHASED", "signedDate": ms, "environment": "Sandbox",
        ]
        return Array(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys))
    }

    func submission(_ submissionId: String, user: String, kind: String = "signedTransaction", payload: String) -> (key: String, value: [UInt8]) {
        let object: [String: Any] = ["schema": "receipt-submitted/v1", "submissionId": submissionId, "userId": user,
                                     "bundleId": Self.bundleId, "kind": kind, "payload": payload,
                                     "submittedAt": "2026-11-30T06:00:00Z"]
        return (Self.bundleId + "/" + user, Array(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys)))
    }

    /// A `receipt-verified/v1` record for fulfil, keyed by its original transaction id.
    func verified(_ id: Int) throws -> (key: String, value: [UInt8]) {
        let transaction = VerifiedTransaction(transactionId: String(id), originalTransactionId: String(id), bundleId: Self.bundleId,
                                              productId: "com.demo.coins.100", type: "Consumable", quantity: 1,
                                              purchaseDate: now, environment: "Sandbox", signedDate: now)
        let record = ReceiptVerified(submissionId: "s-\(id)", bundleId: Self.bundleId, userId: "user-\(id % 97)",
                                     kind: .signedTransaction, verifiedAt: now, transaction: transaction)
        return (String(id), try ContractCoding.encode(record))
    }
}
