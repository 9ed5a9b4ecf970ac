import AppStore
import FakeAppStore
import Foundation
import HTTP
import Kafka
import Observability
import Pipeline

/// `bench budget`: a verify consumer group of several workers on the embedded broker, each with
/// its own App Store client and its partitions' share of one Get Transaction Info budget, against
/// the fake App Store, which counts arrivals per sliding window as Apple would.
struct VerifyBudgetBenchmark {
    var submissions: Int
    var workers: Int
    var budget: AppStoreBudget

    struct Measurement {
        /// Most requests that reached the fake within any sliding window of the budget's length.
        var peak: Int
        var seconds: Double
        /// Each worker's partition count once the group settled.
        var partitions: [Int]
    }

    func run() async throws -> Measurement {
        let partitions = 8
        let cluster = try KafkaMockCluster()
        defer { cluster.close() }
        let topics = Topics()
        // Retry tiers as in production: a request the loaded machine times out is retried, not lost.
        let tiers: [Duration] = [.seconds(1), .seconds(2), .seconds(4)]
        for name in topics.allNames(retryTiers: tiers.count) { try cluster.createTopic(name: name, partitions: partitions) }
        let bootstrap = [cluster.bootstrapServers]
        let fake = try FakeAppStore(configuration: FakeAppStoreConfiguration(bundleId: SubmissionGenerator.bundleId,
                                                                             credentials: try FakeAppStoreCredentials.generate()))
        defer { fake.stop() }
        let http = try CurlHTTPClient()
        defer { http.shutdown() }

        var members: [(runner: StageRunner<VerifyStage>, source: KafkaRecordSource, sink: KafkaRecordSink, share: RequestBudgetShare)] = []
        for index in 0..<workers {
            let limiter = SharedRequestBudget(budgets: [.transactionInfo: budget], margin: .milliseconds(300), maxWait: .seconds(25))
            let api = try AppStoreServerAPIClient(configuration: fake.serverAPIConfiguration(), signer: fake.configuration.credentials.apiKey,
                                                  transport: http, requestLimiter: limiter)
            let verifier = AppStoreSubmissionVerifier(verifier: try SignedDataVerifier(configuration: fake.verifierConfiguration()),
                                                      serverAPI: api)
            var consumer = KafkaConsumerConfiguration(bootstrapServers: bootstrap,
                                                      consumptionStrategy: .group(id: "bench-budget",
                                                                                  topics: topics.inputs(of: .verify, retryTiers: tiers.count)))
            consumer.clientId = "bench-budget-\(index)"
            consumer.partitionAssignmentStrategy = .range
            let source = try KafkaRecordSource(configuration: consumer, revocationTimeout: .seconds(20), logger: .disabled)
            let sink = try KafkaRecordSink(configuration: KafkaProducerConfiguration(bootstrapServers: bootstrap))
            let share = RequestBudgetShare(budget: limiter, inputTopic: topics.ingested, totalPartitions: partitions)
            // A few records in flight: each waits for its slot in its task (one that would wait longer than
            // maxWait goes to a retry tier instead).
            let runner = StageRunner(stage: VerifyStage(verifier: verifier), source: source, sink: sink,
                                     configuration: StageRunnerConfiguration(topics: topics, maxInFlight: 8),
                                     retryPolicy: TieredRetryPolicy(delays: tiers), assignmentHook: share, logger: .disabled, metrics: MetricsRegistry())
            members.append((runner, source, sink, share))
        }
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: bootstrap))
        let path = "/inApps/v1/transactions/"
        let started = ContinuousClock.now
        var settled: [Int] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            for member in members { group.addTask { try await member.runner.run() } }
            // Work arrives once every member has its partitions, as in a steady-state group.
            try await Self.until(.seconds(60), "the group did not settle") {
                members.allSatisfy { $0.share.ownedPartitions > 0 } && members.map(\.share.ownedPartitions).reduce(0, +) == partitions
            }
            settled = members.map(\.share.ownedPartitions)
            let now = Date()
            let messages = try (0..<submissions).map { index in
                let purchase = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                                   purchaseDate: now)
                let submission = IngestedSubmission(submissionId: "budget-\(index)", bundleId: SubmissionGenerator.bundleId,
                                                    userId: "u\(index)", kind: .transactionId, payload: purchase.transactionId,
                                                    submittedAt: now, ingestedAt: now)
                return KafkaProducerMessage(topic: topics.ingested, key: submission.recordKey, value: try ContractCoding.encode(submission))
            }
            _ = try await producer.sendAll(messages)
            let expected = Double(submissions) / Double(budget.requests) * budget.windowSeconds
            var lastNote = ContinuousClock.now
            let reader = KafkaPartitionLogReader(bootstrapServers: bootstrap, clientId: "bench-budget-reader")
            func count(_ topic: String) async -> Int {
                var n = 0
                try? await reader.read(topic: topic, partitions: (0..<Int32(partitions)).map { $0 }) { _ in n += 1 }
                return n
            }
            do {
            try await Self.until(.seconds(max(120, expected * 3)), "not every submission reached the App Store") {
                let arrived = fake.requestArrivals(pathPrefix: path).count
                if ContinuousClock.now - lastNote > .seconds(5) {
                    lastNote = .now
                    printError("bench budget: \(arrived) of \(submissions) requests sent; shares "
                               + members.map { "\($0.share.ownedPartitions)" }.joined(separator: ","))
                }
                return arrived >= submissions
            }
            } catch {
                let counts = [topics.verified, topics.rejected, topics.deadLetter]
                var described: [String] = []
                for topic in counts { described.append("\(topic) \(await count(topic))") }
                throw ValidationError("\(error); \(described.joined(separator: ", "))")
            }
            for member in members { member.runner.shutdownGracefully() }
            try await group.waitForAll()
        }
        await producer.close()
        for member in members { await member.source.close(); await member.sink.close() }
        return Measurement(peak: fake.maxRequests(inAnyWindow: .milliseconds(Int64(budget.windowSeconds * 1000)), pathPrefix: path),
                           seconds: (ContinuousClock.now - started) / .seconds(1), partitions: settled)
    }

    /// Re-checks `condition` every 100 ms until it holds (a benchmark's progress poll, not a test).
    static func until(_ timeout: Duration, _ failure: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ValidationError(failure) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
