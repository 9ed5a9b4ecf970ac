import Foundation
import Observability
import Testing
@testable import Pipeline

private struct InjectedFailure: Error {}

@Suite(.timeLimit(.minutes(1)))
struct StageRunnerTests {
    let input = "receipts.ingested"

    private func runner<S: Stage>(_ stage: S, _ transport: InMemoryTransport, group: String = "g",
                                  configuration: StageRunnerConfiguration = StageRunnerConfiguration(),
                                  retryPolicy: any RetryPolicy = .never, metrics: MetricsRegistry = MetricsRegistry(),
                                  logger: Logger = .disabled) -> StageRunner<S> {
        StageRunner(stage: stage, source: transport.source(group: group, topics: [Topics().input(of: S.name)]),
                    sink: transport.sink, configuration: configuration, retryPolicy: retryPolicy, logger: logger,
                    metrics: metrics, clock: { Fixtures.now })
    }

    @Test func emitsOutputsAndStoresOffsets() async throws {
        let transport = InMemoryTransport()
        let metrics = MetricsRegistry()
        for i in 0..<5 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i % 2)")) }
        let runner = runner(ClosureStage.echo, transport, metrics: metrics)
        let error = try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 4 })
        }
        #expect(error == nil)
        #expect(Set(transport.outputIds()) == ["m0", "m1", "m2", "m3", "m4"])
        let keys = transport.records(in: "receipts.verified").map { String(decoding: $0.key!, as: UTF8.self) }
        #expect(Set(keys) == ["k0", "k1"])
        #expect(metrics.value("receiptd_stage_records_total", labels: [("stage", "verify"), ("outcome", "emitted")]) == 5)
        #expect(metrics.value("receiptd_stage_duration_seconds", labels: [("stage", "verify")]) == 5)  // observations
    }

    @Test func offsetIsStoredOnlyAfterOutputsAreAcknowledged() async throws {
        let transport = InMemoryTransport()
        transport.holdAcknowledgements()
        transport.produce(TestMessage(id: "m0"))
        let runner = runner(ClosureStage.echo, transport)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.heldSendCount == 1 })
            #expect(transport.outputIds() == ["m0"])  // written, not yet acknowledged
            #expect(transport.storedOffset(group: "g", topic: input) == nil)
            transport.releaseAcknowledgements()
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 0 })
        }
    }

    @Test func sinkFailureLeavesOffsetUnstoredAndStopsTheRunner() async throws {
        let transport = InMemoryTransport()
        for i in 0..<3 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)")) }
        transport.setSendFailure { records in
            records.contains { String(decoding: $0.value, as: UTF8.self).contains("\"m1\"") } ? InjectedFailure() : nil
        }
        let failing = runner(ClosureStage.echo, transport)
        await #expect(throws: StageRunnerError.self) { try await failing.run() }
        let stored = transport.storedOffset(group: "g", topic: input)
        #expect(stored == nil || stored! < 1)
        #expect(!transport.outputIds().contains("m1"))

        // A restarted runner resumes after the stored offset, so the failed record is redelivered.
        transport.setSendFailure(nil)
        let restarted = runner(ClosureStage.echo, transport)
        try await whileRunning(restarted) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 2 })
        }
        #expect(transport.outputIds().contains("m1"))
    }

    @Test func watermarkIsContiguousWhenRecordsFinishOutOfOrder() async throws {
        let transport = InMemoryTransport()
        let gate = Gate()
        let stage = ClosureStage { message, _ in
            if message.id == "slow" { try await gate.wait() }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        transport.produce(TestMessage(id: "slow", key: "a"))
        transport.produce(TestMessage(id: "fast1", key: "b"))
        transport.produce(TestMessage(id: "fast2", key: "c"))
        let runner = runner(stage, transport)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { Set($0.outputIds()) == ["fast1", "fast2"] })
            #expect(transport.storedOffset(group: "g", topic: input) == nil)
            gate.open()
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 2 })
        }
        #expect(transport.storedOffsetHistory(group: "g", topic: input) == [2])
    }

    @Test func recordsOfOneKeyAreProcessedInOrderWhileKeysRunInParallel() async throws {
        let transport = InMemoryTransport()
        let keys = ["a", "b", "c", "d", "e"]
        let log = Probe<(order: [String: [Int]], active: [String: Int], concurrent: Int, peak: Int, violations: Int)>(
            ([:], [:], 0, 0, 0))
        let barrier = Gate()
        let stage = ClosureStage { message, _ in
            let parts = message.id.split(separator: "-")
            let index = Int(parts[1])!
            log.update { state in
                state.active[message.key, default: 0] += 1
                if state.active[message.key]! > 1 { state.violations += 1 }
                state.concurrent += 1
                state.peak = max(state.peak, state.concurrent)
                state.order[message.key, default: []].append(index)
            }
            if index == 0 {
                // The first record of every key waits until all five keys are in flight at once.
                if log.value.peak >= keys.count { barrier.open() }
                try await barrier.wait()
            }
            for _ in 0..<(index % 3) { await Task.yield() }
            log.update { state in
                state.active[message.key]! -= 1
                state.concurrent -= 1
            }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        for index in 0..<10 {
            for key in keys { transport.produce(TestMessage(id: "\(key)-\(index)", key: key), partition: 0) }
        }
        let runner = runner(stage, transport)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 49 })
        }
        let state = log.value
        #expect(state.violations == 0)
        #expect(state.peak >= keys.count)
        for key in keys { #expect(state.order[key] == Array(0..<10), "key \(key)") }
    }

    @Test func inFlightRecordsAreBoundedAndTheSourceIsPaused() async throws {
        let transport = InMemoryTransport()
        let gate = Gate()
        let started = Probe(0)
        let stage = ClosureStage { message, _ in
            started.update { $0 += 1 }
            try await gate.wait()
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        // More records than one source event carries (64), so the source is paused, resumed and
        // paused again.
        for i in 0..<200 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)")) }
        let runner = runner(stage, transport, configuration: StageRunnerConfiguration(maxInFlight: 4, resumeThreshold: 1))
        try await whileRunning(runner) {
            #expect(await started.waitUntil { $0 == 4 })
            #expect(await transport.waitUntil { !$0.pausedPartitions(group: "g").isEmpty })
            #expect(started.value == 4)
            #expect(runner.peakInFlight == 4)
            gate.open()
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 199 })
        }
        #expect(runner.peakInFlight == 4)
        #expect(transport.pausedPartitions(group: "g").isEmpty)
        #expect(transport.pauseCallCount(group: "g") >= 2)
        #expect(transport.outputIds().count == 200)
    }

    @Test func undecodableRecordGoesToTheDeadLetterTopicByteForByte() async throws {
        let transport = InMemoryTransport()
        let key: [UInt8] = [0x00, 0xFF, 0x10]
        let value = Array("{not a test message".utf8)
        let headers = [RecordHeader(key: "trace-id", text: "abc")]
        transport.produce(topic: input, key: key, value: value, headers: headers,
                          timestamp: Fixtures.date("2026-11-30T05:00:00.250Z"))
        let metrics = MetricsRegistry()
        let runner = runner(ClosureStage.echo, transport, metrics: metrics)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 0 })
        }
        let dead = try #require(transport.records(in: "receipts.dead-letter").first)
        #expect(dead.key == key)
        #expect(dead.value == value)
        #expect(transport.header("trace-id", of: dead) == "abc")
        #expect(transport.header(RecordHeaders.reason, of: dead) == "undecodable")
        #expect(transport.header(RecordHeaders.originalTopic, of: dead) == input)
        #expect(transport.header(RecordHeaders.originalPartition, of: dead) == "0")
        #expect(transport.header(RecordHeaders.originalOffset, of: dead) == "0")
        #expect(transport.header(RecordHeaders.originalTimestamp, of: dead) == "2026-11-30T05:00:00.250Z")
        #expect(transport.header(RecordHeaders.stage, of: dead) == "verify")
        #expect(transport.header(RecordHeaders.attempt, of: dead) == "1")
        #expect(transport.header(RecordHeaders.firstFailedAt, of: dead) == "2026-11-30T06:00:00.000Z")
        #expect(transport.header(RecordHeaders.lastFailedAt, of: dead) == "2026-11-30T06:00:00.000Z")
        #expect(transport.header(RecordHeaders.error, of: dead) != nil)
        #expect(metrics.value("receiptd_stage_records_total", labels: [("stage", "verify"), ("outcome", "dead-lettered")]) == 1)
        #expect(metrics.value("receiptd_dead_letters_total", labels: [("stage", "verify"), ("reason", "undecodable")]) == 1)
        #expect(metrics.value("receiptd_stage_output_records_total",
                              labels: [("stage", "verify"), ("topic", "receipts.dead-letter")]) == 1)
        #expect(metrics.value("receiptd_stage_input_records_total", labels: [("stage", "verify"), ("topic", input)]) == 1)
    }

    /// A stage that waits on nothing outside runs without the timer: work longer than the
    /// timeout still completes (a timer could not interrupt computation anyway).
    @Test func aComputeOnlyStageIsNotTimedOut() async throws {
        let transport = InMemoryTransport()
        let stage = ComputeOnlyStage { input, _ in
            try await Task.sleep(for: .milliseconds(300))  // stands in for long computation
            return .emit([TestOutput(id: input.id, recordKey: input.key)])
        }
        transport.produce(TestMessage(id: "m0"))
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: ["receipts.ingested"]),
                                 sink: transport.sink, configuration: StageRunnerConfiguration(processingTimeout: .milliseconds(50)),
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 0 })
        }
        #expect(transport.records(in: "receipts.dead-letter").isEmpty)
        #expect(transport.records(in: "receipts.verified").count == 1)
    }

    @Test func processingTimeoutIsATransientFailure() async throws {
        let transport = InMemoryTransport()
        let stage = ClosureStage { _, _ in
            try await Task.sleep(for: .seconds(3600))  // a hung dependency; cancelled by the timeout
            return .emit([])
        }
        transport.produce(TestMessage(id: "m0"))
        let runner = runner(stage, transport, configuration: StageRunnerConfiguration(processingTimeout: .milliseconds(50)))
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 0 })
        }
        let dead = try #require(transport.records(in: "receipts.dead-letter").first)
        #expect(transport.header(RecordHeaders.reason, of: dead) == "timeout")
    }

    @Test func permanentErrorsAreRejectedAndUnclassifiedOnesDeadLettered() async throws {
        let transport = InMemoryTransport()
        let stage = ClosureStage { message, _ in
            switch message.id {
            case "permanent": throw StageError.permanent("invalid-signature", "the signature does not verify")
            case "unclassified": throw InjectedFailure()
            case "reject": return .reject(reason: .unknownProduct, detail: "nope", subject: SubmissionSubject(submissionId: "s9"))
            default: return .done(outcome: .duplicateSuppressed, subject: SubmissionSubject(transactionId: "t1"))
            }
        }
        for id in ["permanent", "unclassified", "reject", "done"] { transport.produce(TestMessage(id: id, key: id)) }
        let runner = runner(stage, transport)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 3 })
        }
        let rejected = try transport.records(in: "receipts.rejected").map {
            ($0, try ContractCoding.decode(ReceiptRejected.self, from: $0.value))
        }
        #expect(Set(rejected.map(\.1.reason)) == ["invalid-signature", .unknownProduct])
        let permanent = try #require(rejected.first { $0.1.reason == "invalid-signature" })
        #expect(permanent.1.detail == "the signature does not verify")
        #expect(permanent.1.stage == .verify)
        #expect(permanent.0.key == Array("permanent".utf8))
        #expect(permanent.1.original.contains("\"permanent\""))
        #expect(rejected.first { $0.1.reason == .unknownProduct }?.1.submissionId == "s9")
        let dead = try #require(transport.records(in: "receipts.dead-letter").first)
        #expect(transport.header(RecordHeaders.reason, of: dead) == "unclassified-error")
        let outcome = try ContractCoding.decode(ReceiptOutcome.self, from: try #require(transport.records(in: "receipts.outcomes").first).value)
        #expect(outcome.outcome == .duplicateSuppressed)
        #expect(outcome.transactionId == "t1")
    }

    @Test func tieredRetryRepublishesToTheTierWithTheNextAttempt() async throws {
        let transport = InMemoryTransport()
        let stage = ClosureStage { _, _ in throw StageError.transient("app-store-unavailable", "503") }
        transport.produce(TestMessage(id: "first"))
        transport.produce(topic: input, key: Array("k".utf8), value: try ContractCoding.encode(TestMessage(id: "third")),
                          headers: [RecordHeader(key: RecordHeaders.attempt, text: "3"),
                                    RecordHeader(key: RecordHeaders.originalTopic, text: "receipts.ingested"),
                                    RecordHeader(key: RecordHeaders.originalOffset, text: "77"),
                                    RecordHeader(key: RecordHeaders.firstFailedAt, text: "2026-11-30T01:00:00.000Z")])
        let metrics = MetricsRegistry()
        let policy: TieredRetryPolicy = .tiered([.seconds(30), .seconds(300)], clock: { Fixtures.now })
        let runner = runner(stage, transport, retryPolicy: policy, metrics: metrics)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 1 })
        }
        let retried = try #require(transport.records(in: "receipts.ingested.retry.1").first)
        #expect(transport.header(RecordHeaders.attempt, of: retried) == "2")
        #expect(transport.header(RecordHeaders.notBefore, of: retried) == "2026-11-30T06:00:30.000Z")
        #expect(transport.header(RecordHeaders.reason, of: retried) == "app-store-unavailable")
        #expect(retried.value == transport.records(in: input)[0].value)
        // Attempt 3 is past the two tiers: dead letter, with the first failure's provenance kept.
        let dead = try #require(transport.records(in: "receipts.dead-letter").first)
        #expect(transport.header(RecordHeaders.attempt, of: dead) == "3")
        #expect(transport.header(RecordHeaders.originalOffset, of: dead) == "77")
        #expect(transport.header(RecordHeaders.firstFailedAt, of: dead) == "2026-11-30T01:00:00.000Z")
        #expect(dead.headers.filter { $0.key == RecordHeaders.attempt }.count == 1)
        #expect(metrics.value("receiptd_stage_records_total", labels: [("stage", "verify"), ("outcome", "retried")]) == 1)
        #expect(metrics.value("receiptd_retries_total", labels: [("stage", "verify"), ("tier", "1")]) == 1)
        #expect(metrics.value("receiptd_dead_letters_total",
                              labels: [("stage", "verify"), ("reason", "app-store-unavailable")]) == 1)
    }

    @Test func revocationWaitsForInFlightRecordsAndStoresTheirOffsets() async throws {
        let transport = InMemoryTransport(partitions: ["receipts.ingested": 2])
        let gate = Gate()
        let events = Probe<[String]>([])
        let stage = ClosureStage { message, _ in
            events.update { $0.append("start \(message.id)") }
            if message.id == "p0-a" { try await gate.wait() }
            events.update { $0.append("done \(message.id)") }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        transport.produce(TestMessage(id: "p0-a", key: "same"), partition: 0)
        transport.produce(TestMessage(id: "p0-b", key: "same"), partition: 0)  // queued behind p0-a
        transport.produce(TestMessage(id: "p1-a", key: "other"), partition: 1)
        let runner = runner(stage, transport)
        try await whileRunning(runner) {
            #expect(await events.waitUntil { $0.contains("start p0-a") && $0.contains("done p1-a") })
            let p0 = TopicPartition(topic: "receipts.ingested", partition: 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await transport.revoke(group: "g", partitions: [p0])
                    events.update { $0.append("revocation acknowledged") }
                }
                for _ in 0..<50 { await Task.yield() }
                #expect(!events.value.contains("revocation acknowledged"))
                gate.open()
                try await group.waitForAll()
            }
            let log = events.value
            #expect(log.firstIndex(of: "done p0-a")! < log.firstIndex(of: "revocation acknowledged")!)
            #expect(!log.contains("start p0-b"))  // not started after revocation: left for the next owner
            #expect(transport.storedOffset(group: "g", topic: "receipts.ingested", partition: 0) == 0)
            // The remaining partition keeps flowing.
            transport.produce(TestMessage(id: "p1-b", key: "other"), partition: 1)
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 1) == 1 })
        }
        // Assigning the partition again redelivers what was not stored.
        let again = self.runner(stage, transport, group: "g")
        try await whileRunning(again) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 0) == 1 })
        }
        #expect(events.value.contains("done p0-b"))
    }

    /// A partition whose records may no longer write: after a lost assignment (an expired
    /// session; the partition may already be another member's) at once, and after a revocation
    /// past its timeout (the group stops waiting for this member) once the wait ends. The record
    /// still processing writes nothing, the sink's unsent records are discarded, the offset stays
    /// unstored, and the next owner processes the record once.
    @Test(arguments: [true, false])
    func aFencedPartitionsRecordWritesNothingMore(lost: Bool) async throws {
        let transport = InMemoryTransport(partitions: ["receipts.ingested": 1])
        let gate = Gate()
        let started = Probe(false)
        let stage = ClosureStage { message, _ in
            started.update { $0 = true }
            if message.id == "m0" { try await gate.wait() }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        let sink = DiscardCountingSink(inner: transport.sink)
        transport.produce(TestMessage(id: "m0"), partition: 0)
        let configuration = StageRunnerConfiguration(revocationTimeout: lost ? .seconds(30) : .milliseconds(50))
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: [input]), sink: sink,
                                 configuration: configuration, logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await started.waitUntil { $0 })
            // Acknowledged with m0 still processing (it waits for the gate).
            await transport.revoke(group: "g", partitions: [TopicPartition(topic: input, partition: 0)], lost: lost)
            #expect(sink.discards.value == 1)
            gate.open()  // m0 finishes while the runner shuts down (which waits for it)
        }
        #expect(transport.outputIds().isEmpty)
        #expect(transport.storedOffset(group: "g", topic: input, partition: 0) == nil)
        let again = self.runner(stage, transport, group: "g")
        try await whileRunning(again) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 0) == 0 })
        }
        #expect(transport.outputIds() == ["m0"])
    }

    @Test func gracefulShutdownDrainsInFlightRecords() async throws {
        let transport = InMemoryTransport()
        let gate = Gate()
        let started = Probe(false)
        let returned = Probe(false)
        let stage = ClosureStage { message, _ in
            if message.id == "m0" {
                started.update { $0 = true }
                try await gate.wait()
            }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        transport.produce(TestMessage(id: "m0", key: "k"))
        transport.produce(TestMessage(id: "m1", key: "k"))  // same key: queued, never started
        let runner = runner(stage, transport)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await runner.run()
                returned.update { $0 = true }
            }
            #expect(await started.waitUntil { $0 })
            runner.shutdownGracefully()
            for _ in 0..<50 { await Task.yield() }
            #expect(!returned.value)
            gate.open()
            try await group.waitForAll()
        }
        #expect(transport.outputIds() == ["m0"])
        #expect(transport.storedOffset(group: "g", topic: input) == 0)
    }

    @Test func gracePeriodBoundsTheDrain() async throws {
        let transport = InMemoryTransport()
        let started = Probe(false)
        let stage = ClosureStage { _, _ in
            started.update { $0 = true }
            try await Task.sleep(for: .seconds(3600))
            return .emit([])
        }
        transport.produce(TestMessage(id: "m0"))
        let runner = runner(stage, transport, configuration: StageRunnerConfiguration(shutdownGracePeriod: .milliseconds(50)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await runner.run() }
            #expect(await started.waitUntil { $0 })
            runner.shutdownGracefully()
            try await group.waitForAll()
        }
        #expect(transport.storedOffset(group: "g", topic: input) == nil)
        #expect(transport.records(in: "receipts.dead-letter").isEmpty)  // abandoned, not failed
    }

    @Test func cancellationStopsTheRunnerAndKeepsFinishedOffsets() async throws {
        let transport = InMemoryTransport()
        transport.produce(TestMessage(id: "m0"))
        let runner = runner(ClosureStage.echo, transport)
        let task = Task { try await runner.run() }
        #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 0 })
        task.cancel()
        _ = try await task.value
        #expect(transport.outputIds() == ["m0"])
    }

    @Test func sourceEndingStopsTheRunner() async throws {
        let transport = InMemoryTransport()
        for i in 0..<3 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)")) }
        let runner = StageRunner(stage: ClosureStage.echo,
                                 source: transport.source(group: "g", topics: [input], finishWhenIdle: true),
                                 sink: transport.sink, logger: .disabled, metrics: MetricsRegistry())
        try await runner.run()
        #expect(transport.outputIds().count == 3)
        #expect(transport.storedOffset(group: "g", topic: input) == 2)
        await #expect(throws: StageRunnerError.self) { try await runner.run() }
    }

    @Test func configurationValidation() throws {
        try StageRunnerConfiguration().validate()
        #expect(throws: PipelineConfigurationError.self) { try StageRunnerConfiguration(maxInFlight: 0).validate() }
        #expect(throws: PipelineConfigurationError.self) {
            try StageRunnerConfiguration(maxInFlight: 4, resumeThreshold: 4).validate()
        }
        #expect(throws: PipelineConfigurationError.self) {
            try StageRunnerConfiguration(processingTimeout: .zero).validate()
        }
    }
}

/// Counts ``RecordSink/discardUnsent()`` calls around the in-memory sink.
private struct DiscardCountingSink: RecordSink {
    let inner: InMemoryRecordSink
    let discards = Probe(0)

    func send(_ records: [OutboundRecord]) async throws { try await inner.send(records) }

    func discardUnsent() async { discards.update { $0 += 1 } }
}
