import Foundation
import Observability
import Testing
@testable import Pipeline

/// The runner with retry tiers over the in-memory transport, on a hand-driven clock: tier
/// routing, the delay gate (held, paused, resumed at the due time), revocation and shutdown.
@Suite(.timeLimit(.minutes(1)))
struct RetryTierTests {
    let input = "receipts.ingested"
    let tier1 = "receipts.ingested.retry.1"
    let delays: [Duration] = [.seconds(10), .seconds(60), .seconds(600)]

    private struct Setup {
        let clock = ManualWallClock(start: Fixtures.now)
        let transport: InMemoryTransport

        init(partitions: [String: Int32] = [:]) {
            let clock = self.clock
            transport = InMemoryTransport(partitions: partitions, clock: { clock.now() })
        }
    }

    private func runner<S: Stage>(_ stage: S, _ setup: Setup, group: String = "g",
                                  metrics: MetricsRegistry = MetricsRegistry()) -> StageRunner<S> {
        let clock = setup.clock
        return StageRunner(stage: stage,
                           source: setup.transport.source(group: group, topics: Topics().inputs(of: S.name, retryTiers: 3)),
                           sink: setup.transport.sink, retryPolicy: TieredRetryPolicy(delays: delays, clock: { clock.now() }),
                           logger: .disabled, metrics: metrics, clock: clock)
    }

    /// A record as the router writes it to tier 1: attempt 2, due `due`.
    @discardableResult
    private func produceRetry(_ transport: InMemoryTransport, id: String, key: String = "k", due: Date,
                              partition: Int32? = nil) -> RecordPosition {
        transport.produce(topic: tier1, key: Array(key.utf8), value: try! ContractCoding.encode(TestMessage(id: id, key: key)),
                          headers: [RecordHeader(key: RecordHeaders.originalTopic, text: input),
                                    RecordHeader(key: RecordHeaders.attempt, text: "2"),
                                    RecordHeader(key: RecordHeaders.notBefore, text: RecordHeaders.timestamp(due))],
                          partition: partition)
    }

    @Test func aFailingRecordWalksTheTiersAndEndsAsADeadLetterWithAllHeaders() async throws {
        let setup = Setup()
        let attempts = Probe<[Int]>([])
        let stage = ClosureStage { _, context in
            attempts.update { $0.append(context.attempt) }
            throw StageError(.transient, reason: "app-store-unavailable", detail: "HTTP 503", appleStatus: 503,
                             appleErrorCode: 5_000_000, environment: "Sandbox")
        }
        setup.transport.produce(topic: input, key: Array("k".utf8), value: try ContractCoding.encode(TestMessage(id: "m0")),
                                headers: [RecordHeader(key: "trace-id", text: "abc")])
        let runner = runner(stage, setup)
        try await whileRunning(runner) {
            for (tier, delay) in [(1, 10.0), (2, 60.0), (3, 600.0)] {
                // Routed to the tier, read back and held: not processed before it is due.
                #expect(await setup.transport.waitUntil { $0.records(in: "receipts.ingested.retry.\(tier)").count == 1 })
                #expect(await setup.transport.waitUntil { _ in runner.heldRecordCount == 1 })
                let retried = setup.transport.records(in: "receipts.ingested.retry.\(tier)")[0]
                #expect(setup.transport.header(RecordHeaders.attempt, of: retried) == String(tier + 1))
                #expect(setup.transport.header(RecordHeaders.notBefore, of: retried)
                    == RecordHeaders.timestamp(setup.clock.now() + delay))
                #expect(attempts.value.count == tier)
                setup.clock.advance(by: delay - 1)
                for _ in 0..<20 { await Task.yield() }
                #expect(attempts.value.count == tier)
                #expect(runner.heldRecordCount == 1)
                setup.clock.advance(by: 1)
                #expect(await attempts.waitUntil { $0.count == tier + 1 })
            }
            #expect(await setup.transport.waitUntil { $0.records(in: "receipts.dead-letter").count == 1 })
        }
        #expect(attempts.value == [1, 2, 3, 4])
        let dead = try #require(setup.transport.records(in: "receipts.dead-letter").first)
        let original = setup.transport.records(in: input)[0]
        #expect(dead.key == original.key && dead.value == original.value)
        let header = { (name: String) in setup.transport.header(name, of: dead) }
        #expect(header("trace-id") == "abc")
        #expect(header(RecordHeaders.originalTopic) == input)
        #expect(header(RecordHeaders.originalPartition) == "0")
        #expect(header(RecordHeaders.originalOffset) == "0")
        #expect(header(RecordHeaders.originalTimestamp) == "2026-11-30T06:00:00.000Z")
        #expect(header(RecordHeaders.stage) == "verify")
        #expect(header(RecordHeaders.attempt) == "4")
        #expect(header(RecordHeaders.firstFailedAt) == "2026-11-30T06:00:00.000Z")
        #expect(header(RecordHeaders.lastFailedAt) == "2026-11-30T06:11:10.000Z")
        #expect(header(RecordHeaders.reason) == "app-store-unavailable")
        #expect(header(RecordHeaders.error) == "transient app-store-unavailable: HTTP 503")
        #expect(header(RecordHeaders.appleStatus) == "503")
        #expect(header(RecordHeaders.appleErrorCode) == "5000000")
        #expect(header(RecordHeaders.environment) == "Sandbox")
        #expect(header(RecordHeaders.notBefore) == nil)
        for name in RecordHeaders.all { #expect(dead.headers.filter { $0.key == name }.count <= 1, "\(name) repeated") }
        // Every tier record was stored only after its successor was acknowledged.
        #expect(setup.transport.storedOffset(group: "g", topic: "receipts.ingested.retry.3") == 0)
    }

    @Test func retryAfterFromTheErrorPushesNotBeforeLater() async throws {
        let setup = Setup()
        let stage = ClosureStage { _, context in
            throw StageError(.transient, reason: "rate-limited", detail: "429", retryAfter: context.now + 900, appleStatus: 429)
        }
        setup.transport.produce(TestMessage(id: "m0"))
        let runner = runner(stage, setup)
        try await whileRunning(runner) {
            #expect(await setup.transport.waitUntil { _ in runner.heldRecordCount == 1 })
        }
        let retried = try #require(setup.transport.records(in: tier1).first)
        #expect(setup.transport.header(RecordHeaders.notBefore, of: retried) == "2026-11-30T06:15:00.000Z")
        #expect(setup.transport.header(RecordHeaders.appleStatus, of: retried) == "429")
        #expect(setup.transport.header(RecordHeaders.appleErrorCode, of: retried) == nil)
    }

    @Test func aHeldPartitionIsPausedUntilDueWhileOtherPartitionsKeepFlowing() async throws {
        let setup = Setup(partitions: ["receipts.ingested.retry.1": 2])
        let processed = Probe<[String]>([])
        let stage = ClosureStage { message, context in
            processed.update { $0.append("\(message.id)@\(context.attempt)") }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        let held = TopicPartition(topic: tier1, partition: 0)
        produceRetry(setup.transport, id: "late-a", due: Fixtures.now + 30, partition: 0)
        produceRetry(setup.transport, id: "late-b", due: Fixtures.now + 30, partition: 0)
        produceRetry(setup.transport, id: "due", due: Fixtures.now - 1, partition: 1)
        setup.transport.produce(TestMessage(id: "fresh"))
        let runner = runner(stage, setup)
        try await whileRunning(runner) {
            #expect(await processed.waitUntil { Set($0) == ["due@2", "fresh@1"] })
            #expect(await setup.transport.waitUntil { $0.pausedPartitions(group: "g") == [held] })
            // late-a, and late-b too when the source handed it over in the same event as late-a,
            // before the pause took effect.
            #expect((1...2).contains(runner.heldRecordCount))
            #expect(setup.transport.storedOffset(group: "g", topic: tier1, partition: 0) == nil)
            // New input keeps flowing while the tier partition waits.
            setup.transport.produce(TestMessage(id: "fresh-2", key: "other"))
            #expect(await processed.waitUntil { $0.contains("fresh-2@1") })
            #expect(!processed.value.contains { $0.hasPrefix("late") })

            setup.clock.advance(by: 30)
            #expect(await setup.transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested.retry.1", partition: 0) == 1 })
            #expect(setup.transport.pausedPartitions(group: "g").isEmpty)
        }
        #expect(processed.value.filter { $0.hasPrefix("late") } == ["late-a@2", "late-b@2"])
        #expect(runner.heldRecordCount == 0)
    }

    @Test func aRevokedPartitionDropsItsHeldRecordForTheNextOwner() async throws {
        let setup = Setup()
        let processed = Probe<[String]>([])
        let stage = ClosureStage { message, _ in
            processed.update { $0.append(message.id) }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        let tp = TopicPartition(topic: tier1, partition: 0)
        produceRetry(setup.transport, id: "late", due: Fixtures.now + 60)
        let runner = runner(stage, setup)
        try await whileRunning(runner) {
            #expect(await setup.transport.waitUntil { _ in runner.heldRecordCount == 1 })
            await setup.transport.revoke(group: "g", partitions: [tp])
            #expect(runner.heldRecordCount == 0)
            #expect(setup.transport.storedOffset(group: "g", topic: tier1) == nil)
            // Assigned again (as the next owner would be): redelivered, held again, processed when due.
            setup.transport.assign(group: "g", partitions: [tp])
            #expect(await setup.transport.waitUntil { _ in runner.heldRecordCount == 1 })
            setup.clock.advance(by: 60)
            #expect(await setup.transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested.retry.1") == 0 })
        }
        #expect(processed.value == ["late"])
    }

    @Test func shutdownWithHeldRecordsReturnsAtOnceAndStoresNothingForThem() async throws {
        let setup = Setup()
        let processed = Probe<[String]>([])
        let stage = ClosureStage { message, _ in
            processed.update { $0.append(message.id) }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        produceRetry(setup.transport, id: "late", due: Fixtures.now + 3600)
        setup.transport.produce(TestMessage(id: "fresh"))
        let first = runner(stage, setup)
        let started = ContinuousClock.now
        let error = try await whileRunning(first) {
            #expect(await setup.transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 0 })
            #expect(await setup.transport.waitUntil { _ in first.heldRecordCount == 1 })
        }
        #expect(error == nil)
        // The held record is due in an hour (on a clock nobody advances): returning at all, well
        // within the suite's time limit, shows shutdown does not wait for it.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(setup.transport.storedOffset(group: "g", topic: tier1) == nil)
        #expect(processed.value == ["fresh"])

        // Nothing was lost: a restarted worker, once the record is due, processes it.
        setup.clock.advance(by: 3600)
        let second = runner(stage, setup)
        try await whileRunning(second) {
            #expect(await setup.transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested.retry.1") == 0 })
        }
        #expect(processed.value == ["fresh", "late"])
    }
}
