import Foundation
import Kafka
import Observability
import Pipeline
import Synchronization
import Testing

/// Non-blocking retries on the embedded broker: a transient failure goes through the retry tiers
/// (short delays here) and ends as exactly one entitlement; a worker process stopped with
/// SIGTERM while it holds a not-yet-due tier record exits 0 promptly and loses nothing.
@Suite(.timeLimit(.minutes(3))) struct RetryTierIntegrationTests {
    /// Counts verify attempts per submission, with their instants.
    private final class Attempts: Sendable {
        let log = Mutex<[String: [(attempt: Int, at: ContinuousClock.Instant)]]>([:])

        func record(_ id: String, attempt: Int) -> Int {
            log.withLock { log in
                log[id, default: []].append((attempt, .now))
                return log[id]!.count
            }
        }
    }

    @Test func transientVerifyFailuresGoThroughTheTiersAndEndAsOneEntitlement() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let failures = 2
        let attempts = Attempts()
        let verifier = ClosureSubmissionVerifier { submission, context in
            let calls = attempts.record(submission.submissionId, attempt: context.attempt)
            if calls <= failures {
                throw StageError(.transient, reason: "app-store-unavailable", detail: "HTTP 503", appleStatus: 503)
            }
            let id = String(submission.submissionId.dropFirst(2))
            return [VerifiedTransaction(transactionId: id, originalTransactionId: id, bundleId: Samples.bundleId,
                                        productId: "com.demo.coins.100", type: "Consumable", quantity: 1,
                                        purchaseDate: samples.now, environment: "Sandbox", signedDate: samples.now)]
        }
        let delays: [Duration] = [.milliseconds(200), .milliseconds(200), .milliseconds(200)]
        let verify = try broker.runner(VerifyStage(verifier: verifier), group: "tiers-verify",
                                                                   retryDelays: delays)
        let fulfil = try broker.runner(
            FulfilStage(catalogue: try BrokerFixture.catalogue(), ledger: KeyedStateStore()), group: "tiers-fulfil")
        let ids = (0..<4).map { "s-\(7_000 + $0)" }
        let ingested = try ids.enumerated().map { index, id in
            let record = IngestedSubmission(submissionId: id, bundleId: Samples.bundleId, userId: "u\(index)",
                                            kind: .signedTransaction, payload: "opaque", submittedAt: samples.now,
                                            ingestedAt: samples.now)
            return (key: "\(Samples.bundleId)/u\(index)", value: try ContractCoding.encode(record))
        }
        let tiers = (1...2).map { broker.topics.retry(of: .verify, tier: $0) }
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter] + tiers)
        try await broker.publish(broker.topics.ingested, ingested)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await verify.run() }
            group.addTask { try await fulfil.run() }
            try await reader.wait { $0.filter { $0.topic == broker.topics.entitlementsChanged }.count >= ids.count }
            verify.shutdownGracefully(); fulfil.shutdownGracefully()
            try await group.waitForAll()
        }

        let changes = reader.messages(in: broker.topics.entitlementsChanged)
        #expect(changes.count == ids.count)
        #expect(Set(changes.compactMap { $0.json["submissionId"] as? String }) == Set(ids))
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        for (tier, topic) in tiers.enumerated() {
            let records = reader.messages(in: topic)
            #expect(records.count == ids.count, "\(topic)")
            #expect(records.allSatisfy { $0.header(RecordHeaders.attempt) == String(tier + 2) })
            #expect(records.allSatisfy { $0.header(RecordHeaders.originalTopic) == broker.topics.ingested })
            #expect(records.allSatisfy { $0.header(RecordHeaders.appleStatus) == "503" })
        }
        let log = attempts.log.withLock { $0 }
        for id in ids {
            let seen = try #require(log[id])
            #expect(seen.map(\.attempt) == [1, 2, 3])
            // Each retry waited for its tier's delay (never less; the poll loop ran meanwhile).
            for index in 1..<seen.count {
                #expect(seen[index].at - seen[index - 1].at >= .milliseconds(190), "\(id) attempt \(index + 1)")
            }
        }
        await reader.close()
    }

    @Test func sigtermWhileARetryIsHeldExitsZeroAndTheRecordIsNotLost() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashRestartTests.binary),
                     "build receiptd first: \(CrashRestartTests.binary)")
        let broker = try BrokerFixture()
        let bootstrap = try broker.cluster.listen(bootstrapPort: 0)
        let samples = try Samples()
        let tier1 = broker.topics.retry(of: .fulfil, tier: 1)
        // A tier-1 record due in an hour, and fresh work beside it.
        let held = try samples.verified(880_001)
        let producer = try broker.producer()
        _ = try await producer.send(KafkaProducerMessage(topic: tier1, key: held.key, value: held.value, headers: [
            KafkaHeader(key: RecordHeaders.originalTopic, value: Array(broker.topics.verified.utf8)),
            KafkaHeader(key: RecordHeaders.attempt, value: Array("2".utf8)),
            KafkaHeader(key: RecordHeaders.notBefore, value: Array(RecordHeaders.timestamp(Date() + 3600).utf8)),
        ]))
        await producer.close()
        try await broker.publish(broker.topics.verified, (0..<20).map { try samples.verified(880_100 + $0) })

        let directory = try scratchDirectory("receiptd-held")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("fulfil.json").path
        let log = directory.appendingPathComponent("fulfil.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        try """
        {"kafka": {"bootstrapServers": "\(bootstrap)", "commitIntervalSeconds": 0.3, "sessionTimeoutSeconds": 6,
                   "rebalanceTimeoutSeconds": 5},
         "topics": {"partitions": \(BrokerFixture.partitions), "create": false},
         "runner": {"shutdownGraceSeconds": 10},
         "retry": {"tierDelaysSeconds": [3600]},
         "groups": {"fulfil": "held-fulfil"},
         "fulfil": {"catalogue": "\(BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path)"},
         "log": {"level": "info"}}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter])

        let worker = try CrashRestartTests().startWorker(config: config, log: log)
        let logText = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        do {
            try await reader.wait(timeout: .seconds(60)) { $0.count >= 20 }
            try await reader.wait(timeout: .seconds(30)) { _ in logText().contains("retry record not due") }
        } catch {
            worker.terminate()
            Issue.record("worker did not get there; its log ends with:\n\(String(logText().suffix(3000)))")
            throw error
        }
        let stopping = ContinuousClock.now
        worker.terminate()  // SIGTERM
        worker.waitUntilExit()
        #expect(worker.terminationStatus == 0, "graceful shutdown should exit 0; log:\n\(String(logText().suffix(2000)))")
        #expect(ContinuousClock.now - stopping < .seconds(10), "exceeded the grace period")
        #expect(!reader.messages.contains { $0.json["transactionId"] as? String == "880001" })

        // The held record's offset was never stored: the group's next member (here two hours
        // later, so it is due) receives it and fulfils it.
        let later = ManualWallClock(start: Date() + 7200)
        let fulfil = try broker.runner(
            FulfilStage(catalogue: try BrokerFixture.catalogue(), ledger: KeyedStateStore()), group: "held-fulfil",
            retryDelays: [.seconds(3600)], clock: later)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await fulfil.run() }
            try await reader.wait(timeout: .seconds(60)) { messages in
                messages.contains { $0.json["transactionId"] as? String == "880001" }
            }
            fulfil.shutdownGracefully()
            try await group.waitForAll()
        }
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        await reader.close()
    }
}
