import AppStore
import FakeAppStore
import Foundation
import HTTP
import Kafka
import Pipeline
import Testing

/// Apple's request limits shared by a verify group: each worker takes the share of the budget its
/// partitions give it, and a 429's `Retry-After` pauses the endpoint for the whole worker. The
/// fake App Store counts what arrives, as Apple would.
@Suite(.timeLimit(.minutes(3))) struct VerifyBudgetTests {
    static let transactionInfo = "/inApps/v1/transactions/"

    /// A verify runner with its own HTTP client, limiter and budget share, as one `receiptd verify` process.
    struct Worker {
        let worker: KafkaStageWorker<VerifyStage>
        let share: RequestBudgetShare
        let http: CurlHTTPClient

        init(broker: BrokerFixture, fake: FakeAppStore, group: String, budget: AppStoreBudget, maxInFlight: Int = 64,
             retryDelays: [Duration] = []) throws {
            http = try CurlHTTPClient()
            let limiter = SharedRequestBudget(budgets: [.transactionInfo: budget], margin: .milliseconds(300), maxWait: .seconds(25))
            var configuration = fake.serverAPIConfiguration()
            configuration.requestTimeout = .seconds(30)
            let api = try AppStoreServerAPIClient(configuration: configuration, signer: fake.configuration.credentials.apiKey,
                                                  transport: http, requestLimiter: limiter)
            let verifier = AppStoreSubmissionVerifier(verifier: try SignedDataVerifier(configuration: fake.verifierConfiguration()),
                                                      serverAPI: api)
            share = RequestBudgetShare(budget: limiter, inputTopic: broker.topics.ingested, totalPartitions: BrokerFixture.partitions)
            worker = try broker.runner(VerifyStage(verifier: verifier), group: group, maxInFlight: maxInFlight,
                                                       retryDelays: retryDelays, assignmentHook: share)
        }

        var runner: StageRunner<VerifyStage> { worker.runner }

        /// After ``KafkaStageWorker/run()`` (which closed producer and consumer): the HTTP client.
        func close() async {
            await http.shutdownAndWait()
        }
    }

    static func fake(faults: FakeAppStoreFaults = .none) throws -> FakeAppStore {
        var configuration = FakeAppStoreConfiguration(bundleId: Samples.bundleId, credentials: try FakeAppStoreCredentials.generate())
        configuration.faults = faults
        return try FakeAppStore(configuration: configuration)
    }

    /// `count` transactionId submissions of purchases the fake knows, straight into verify's input.
    static func submissions(_ fake: FakeAppStore, count: Int) throws -> [(key: String, value: [UInt8])] {
        try (0..<count).map { index in
            let purchase = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                               purchaseDate: Date().addingTimeInterval(-60))
            let submission = IngestedSubmission(submissionId: "b-\(index)", bundleId: Samples.bundleId, userId: "u\(index % 5)",
                                                kind: .transactionId, payload: purchase.transactionId, submittedAt: Date(),
                                                ingestedAt: Date())
            return (submission.recordKey, try ContractCoding.encode(submission))
        }
    }

    @Test func aGroupOfVerifyWorkersNeverExceedsTheBudget() async throws {
        let broker = try BrokerFixture()
        let fake = try Self.fake()
        defer { fake.stop() }
        let budget = AppStoreBudget(requests: 6, windowSeconds: 2)
        let workers = try (0..<2).map { _ in try Worker(broker: broker, fake: fake, group: "budget-verify", budget: budget) }
        let reader = try broker.reader([broker.topics.verified, broker.topics.rejected, broker.topics.deadLetter])
        let records = try Self.submissions(fake, count: 30)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in workers { group.addTask { try await worker.worker.run() } }
            // Both members own partitions before any work arrives, so no share changes mid-test.
            try await reader.wait { _ in workers.allSatisfy { $0.share.ownedPartitions > 0 }
                && workers.map(\.share.ownedPartitions).reduce(0, +) == BrokerFixture.partitions }
            try await broker.publish(broker.topics.ingested, records)
            try await reader.wait(timeout: .seconds(120)) { $0.count >= records.count }
            for worker in workers { worker.runner.shutdownGracefully() }
            try await group.waitForAll()
        }
        await reader.close()
        for worker in workers { await worker.close() }

        #expect(reader.messages(in: broker.topics.verified).count == records.count)
        #expect(reader.messages(in: broker.topics.rejected).isEmpty && reader.messages(in: broker.topics.deadLetter).isEmpty)
        #expect(fake.requestArrivals(pathPrefix: Self.transactionInfo).count == records.count)
        let peak = fake.maxRequests(inAnyWindow: .seconds(2), pathPrefix: Self.transactionInfo)
        #expect(peak <= budget.requests, "at most \(budget.requests) requests per 2 s window, saw \(peak)")
        #expect(peak >= budget.requests / 2, "the budget was actually the constraint (peak \(peak))")
    }

    @Test func retryAfterPausesTheEndpointForTheWholeWorker() async throws {
        let broker = try BrokerFixture()
        var faults = FakeAppStoreFaults()
        faults.rateLimitRate = 0.25
        faults.retryAfterDelay = .milliseconds(800)
        let fake = try Self.fake(faults: faults)
        defer { fake.stop() }
        // One record in flight at a time, so every request after a 429 was sent after the worker read it.
        let worker = try Worker(broker: broker, fake: fake, group: "budget-429", budget: AppStoreBudget(requests: 1000, windowSeconds: 1),
                                maxInFlight: 1, retryDelays: [.milliseconds(100), .milliseconds(100), .milliseconds(100)])
        let reader = try broker.reader([broker.topics.verified, broker.topics.rejected, broker.topics.deadLetter])
        let records = try Self.submissions(fake, count: 16)
        try await broker.publish(broker.topics.ingested, records)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await worker.worker.run() }
            try await reader.wait(timeout: .seconds(120)) { $0.count >= records.count }
            worker.runner.shutdownGracefully()
            try await group.waitForAll()
        }
        await reader.close()
        await worker.close()

        let throttles = fake.throttles.filter { $0.path.hasPrefix(Self.transactionInfo) }
        #expect(!throttles.isEmpty, "the fault schedule produced no 429")
        let arrivals = fake.requestArrivals(pathPrefix: Self.transactionInfo)
        for throttle in throttles {
            let early = arrivals.filter { $0 > throttle.answeredAt && $0 < throttle.retryAt }
            #expect(early.isEmpty, "\(early.count) requests arrived between a 429 and its Retry-After")
        }
        #expect(arrivals.contains { arrival in throttles.contains { arrival >= $0.retryAt } }, "requests resumed after a pause")
    }
}
