import Foundation
import Observability
import Testing
@testable import Pipeline

private struct InjectedFailure: Error {}

/// The runner's batches for stages that wait on nothing outside (``StageWaiting/nothing`` and
/// ``StageWaiting/deliveries``): several records per task, their outputs in one send (two with
/// state outputs), their completions under one lock; the per-record guarantees hold for every
/// record of a batch, and a state store's wait never waits on its own batch.
@Suite(.timeLimit(.minutes(1)))
struct StageRunnerBatchTests {
    let input = "receipts.ingested"

    private func runner(_ stage: ComputeOnlyStage, _ transport: InMemoryTransport, group: String = "g",
                        sink: (any RecordSink)? = nil,
                        configuration: StageRunnerConfiguration = StageRunnerConfiguration(),
                        metrics: MetricsRegistry = MetricsRegistry()) -> StageRunner<ComputeOnlyStage> {
        StageRunner(stage: stage, source: transport.source(group: group, topics: [input]), sink: sink ?? transport.sink,
                    configuration: configuration, logger: .disabled, metrics: metrics, clock: { Fixtures.now })
    }

    private static let echo = ComputeOnlyStage { input, _ in .emit([TestOutput(id: input.id, recordKey: input.key)]) }

    @Test func splitsReadyRecordsIntoAtLeastTwoBatchesOfBoundedSize() {
        func sizes(_ count: Int) -> [Int] {
            let slot = PartitionSlot(TopicPartition(topic: "t", partition: 0), epoch: .initial)
            let items = (0..<count).map { WorkItem(record: InboundRecord(topic: "t", partition: 0, offset: Int64($0), key: nil,
                                                                         value: [], timestamp: Fixtures.now), slot: slot) }
            return StageRunner<ComputeOnlyStage>.batches(of: items).map(\.count)
        }
        #expect(sizes(0) == [])
        #expect(sizes(1) == [1])
        #expect(sizes(2) == [1, 1])
        #expect(sizes(5) == [3, 2])
        #expect(sizes(300) == [64, 64, 64, 64, 44])
    }

    /// Many keys over several partitions: every record emitted once, each key's records processed
    /// and emitted in offset order, every partition's last offset stored.
    @Test func everyRecordIsEmittedOnceInKeyOrder() async throws {
        let transport = InMemoryTransport(partitions: [input: 4])
        let log = Probe<[String: [Int]]>([:])
        let stage = ComputeOnlyStage { message, _ in
            let index = Int(message.id.split(separator: "-")[1])!
            log.update { $0[message.key, default: []].append(index) }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        let keys = (0..<7).map { "k\($0)" }
        for index in 0..<60 {
            for (n, key) in keys.enumerated() { transport.produce(TestMessage(id: "\(key)-\(index)", key: key), partition: Int32(n % 4)) }
        }
        let runner = runner(stage, transport)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { transport in
                (0..<4).allSatisfy { p in
                    let expected = Int64(keys.indices.filter { $0 % 4 == p }.count * 60 - 1)
                    return transport.storedOffset(group: "g", topic: "receipts.ingested", partition: Int32(p)) == expected
                }
            })
        }
        for key in keys { #expect(log.value[key] == Array(0..<60), "key \(key)") }
        let outputs = transport.outputIds()
        #expect(outputs.count == 420)
        #expect(Set(outputs).count == 420)
        for key in keys {
            #expect(outputs.filter { $0.hasPrefix("\(key)-") } == (0..<60).map { "\(key)-\($0)" }, "key \(key)")
        }
    }

    @Test func offsetsAreStoredOnlyAfterTheBatchIsAcknowledged() async throws {
        let transport = InMemoryTransport()
        transport.holdAcknowledgements()
        for i in 0..<5 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)")) }
        let runner = runner(Self.echo, transport)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.outputIds().count == 5 })
            #expect(transport.storedOffset(group: "g", topic: input) == nil)
            transport.releaseAcknowledgements()
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 4 })
        }
    }

    /// A failed send fails every record of its batch: none is done, the runner stops, and a
    /// restarted runner emits them all.
    @Test func aFailedSendFailsTheWholeBatch() async throws {
        let transport = InMemoryTransport()
        for i in 0..<6 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)")) }
        transport.setSendFailure { records in
            records.contains { String(decoding: $0.value, as: UTF8.self).contains("\"m1\"") } ? InjectedFailure() : nil
        }
        let failing = runner(Self.echo, transport)
        await #expect(throws: StageRunnerError.self) { try await failing.run() }
        #expect(!transport.outputIds().contains("m1"))
        let stored = transport.storedOffset(group: "g", topic: input)
        #expect(stored == nil || stored! < 1)

        transport.setSendFailure(nil)
        let restarted = runner(Self.echo, transport)
        try await whileRunning(restarted) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 5 })
        }
        #expect(Set(transport.outputIds()) == Set((0..<6).map { "m\($0)" }))
    }

    /// Undecodable records, rejections, outcomes and outputs in one batch each take their own
    /// route, and each is counted once in the batch's metrics (recorded per batch, not per record).
    @Test func eachRecordOfABatchTakesItsOwnRoute() async throws {
        let transport = InMemoryTransport()
        let stage = ComputeOnlyStage { message, _ in
            if message.id.hasPrefix("bad") { return .reject(reason: .invalidField, detail: "bad") }
            if message.id.hasPrefix("dup") { return .done(outcome: .duplicateSuppressed) }
            return .emit([TestOutput(id: message.id, recordKey: message.key), TestOutput(id: message.id + "+", recordKey: message.key)])
        }
        transport.produce(TestMessage(id: "m0", key: "a"))
        transport.produce(topic: input, key: "b", value: "not json")
        transport.produce(TestMessage(id: "bad1", key: "c"))
        transport.produce(TestMessage(id: "m3", key: "d"))
        transport.produce(TestMessage(id: "dup4", key: "e"))
        transport.produce(TestMessage(id: "bad5", key: "f"))
        let metrics = MetricsRegistry()
        let runner = runner(stage, transport, metrics: metrics)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested") == 5 })
        }
        #expect(Set(transport.outputIds()) == ["m0", "m0+", "m3", "m3+"])
        #expect(transport.records(in: "receipts.dead-letter").map(\.value) == [Array("not json".utf8)])
        #expect(transport.records(in: "receipts.rejected").count == 2)
        func value(_ name: String, _ labels: (String, String)...) -> Double? {
            metrics.value(name, labels: [("stage", "verify")] + labels)
        }
        #expect(value("receiptd_stage_records_total", ("outcome", "emitted")) == 2)
        #expect(value("receiptd_stage_records_total", ("outcome", "rejected")) == 2)
        #expect(value("receiptd_stage_records_total", ("outcome", "done")) == 1)
        #expect(value("receiptd_stage_records_total", ("outcome", "dead-lettered")) == 1)
        #expect(value("receiptd_stage_input_records_total", ("topic", input)) == 6)
        #expect(value("receiptd_stage_output_records_total", ("topic", "receipts.verified")) == 4)
        #expect(value("receiptd_stage_output_records_total", ("topic", "receipts.rejected")) == 2)
        #expect(value("receiptd_stage_output_records_total", ("topic", "receipts.dead-letter")) == 1)
        #expect(value("receiptd_rejections_total", ("reason", "invalid-field")) == 2)
        #expect(value("receiptd_outcomes_total", ("outcome", "duplicate-suppressed")) == 1)
        #expect(value("receiptd_dead_letters_total", ("reason", "undecodable")) == 1)
        #expect(value("receiptd_stage_duration_seconds") == 6)
    }

    /// Batches whose partition is fenced while they process (lost assignment, or a revocation past
    /// its timeout) write nothing; the next owner emits the records once.
    @Test(arguments: [true, false])
    func aFencedBatchWritesNothing(lost: Bool) async throws {
        let transport = InMemoryTransport(partitions: [input: 1])
        let gate = Gate()
        let started = Probe(false)
        let stage = ComputeOnlyStage { message, _ in
            started.update { $0 = true }
            try await gate.wait()  // every record, whichever batch it is in
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        for i in 0..<3 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)"), partition: 0) }
        let configuration = StageRunnerConfiguration(revocationTimeout: lost ? .seconds(30) : .milliseconds(50))
        let runner = runner(stage, transport, configuration: configuration)
        try await whileRunning(runner) {
            #expect(await started.waitUntil { $0 })
            await transport.revoke(group: "g", partitions: [TopicPartition(topic: input, partition: 0)], lost: lost)
            gate.open()
        }
        #expect(transport.outputIds().isEmpty)
        #expect(transport.storedOffset(group: "g", topic: input, partition: 0) == nil)
        let again = self.runner(Self.echo, transport)
        try await whileRunning(again) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 0) == 2 })
        }
        #expect(transport.outputIds().sorted() == ["m0", "m1", "m2"])
    }

    /// Records of different record keys sharing one state key (fulfil's ledger is keyed by
    /// purchase: Family Sharing, transfers): a record that finds the key pending waits for an
    /// earlier record of its own batch, which the batch therefore delivers first. Every update sees
    /// every acknowledged one before it: the counts are 1 to N, each once.
    @Test func recordsOfOneBatchSharingAStateKeyDoNotWaitOnEachOther() async throws {
        let transport = InMemoryTransport(partitions: [input: 2])
        let store = KeyedStateStore<Int>()
        let stage = StoreStage { message, context in
            let count = try await store.update("shared", scope: context.delivery) { current in
                ((current ?? 0) + 1, (current ?? 0) + 1)
            }
            return .emit([StoreStageOutput(id: "\(message.id)#\(count)", recordKey: message.key, isState: false)])
        }
        let keys = (0..<8).map { "k\($0)" }
        for index in 0..<10 {
            for (n, key) in keys.enumerated() { transport.produce(TestMessage(id: "\(key)-\(index)", key: key), partition: Int32(n % 2)) }
        }
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: [input]), sink: transport.sink,
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { transport in
                (0..<2).allSatisfy { transport.storedOffset(group: "g", topic: "receipts.ingested", partition: Int32($0)) == 39 }
            })
        }
        let outputs = transport.outputIds()
        #expect(outputs.count == 80)
        #expect(outputs.compactMap { Int($0.split(separator: "#")[1]) }.sorted() == Array(1...80))
        #expect(store.value(of: "shared", in: 0) == 80)
        for key in keys {
            #expect(outputs.filter { $0.hasPrefix("\(key)-") }.map { $0.split(separator: "#")[0] }
                        == (0..<10).map { "\(key)-\($0)"[...] }, "key \(key)")
        }
    }

    /// A batch with state outputs (pinned to the input's partition) sends every other output first
    /// and the state outputs only once those are acknowledged, as a record alone does; fewer sends
    /// than two per record.
    @Test func aBatchSendsItsStateOutputsAfterTheOthersAreAcknowledged() async throws {
        let transport = InMemoryTransport(partitions: [input: 2, "entitlements.changed": 2])
        let sink = RecordingSink(transport.sink)
        let stage = StoreStage { message, _ in
            .emit([StoreStageOutput(id: message.id, recordKey: message.key, isState: true),
                   StoreStageOutput(id: message.id, recordKey: message.key, isState: false)])
        }
        for index in 0..<40 { transport.produce(TestMessage(id: "m\(index)", key: "k\(index)"), partition: Int32(index % 2)) }
        transport.holdAcknowledgements()
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: [input]), sink: sink,
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.outputIds().count == 40 })
            #expect(transport.records(in: "entitlements.changed").isEmpty)
            transport.releaseAcknowledgements()
            #expect(await transport.waitUntil { transport in
                (0..<2).allSatisfy { transport.storedOffset(group: "g", topic: "receipts.ingested", partition: Int32($0)) == 19 }
            })
        }
        let sends = sink.sends
        for index in 0..<40 {
            let other = sends.firstIndex { $0.contains { $0.topic == "receipts.verified" && $0.key == Array("k\(index)".utf8) } }
            let state = sends.firstIndex { $0.contains { $0.topic == "entitlements.changed" && $0.key == Array("k\(index)".utf8) } }
            #expect(other != nil && state != nil && other! < state!, "m\(index)")
        }
        #expect(transport.records(in: "entitlements.changed").count == 40)
        for record in transport.records(in: "entitlements.changed") {
            let id = try ContractCoding.decode(StoreStageOutput.self, from: record.value).id
            #expect(record.partition == Int32(Int(id.dropFirst())! % 2), "\(id) stays in its input's partition")
        }
        #expect(sends.count < 80)
    }

    /// A stage that waits on the outside (verify): a record whose input may wait leaves the batch
    /// for a task of its own under the processing timeout; the others run in batches without it
    /// (a slow one is not cut short) and are not held up by a waiting one.
    @Test func inputsThatMayWaitLeaveTheBatchForATaskUnderTheTimeout() async throws {
        let transport = InMemoryTransport(partitions: [input: 2])
        let stage = ClosureStage(mayWait: { $0.id.hasPrefix("wait") }) { message, _ in
            if message.id.hasPrefix("wait") {
                try await Task.sleep(for: .seconds(3600))  // a hung App Store call; cancelled by the timeout
            } else if message.id == "long" {
                try await Task.sleep(for: .milliseconds(300))  // longer than the timeout, but not timed
            }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        transport.produce(TestMessage(id: "wait-0", key: "w"), partition: 0)
        transport.produce(TestMessage(id: "long", key: "l"), partition: 1)
        for index in 0..<10 { transport.produce(TestMessage(id: "m\(index)", key: "k\(index)"), partition: 1) }
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: [input]), sink: transport.sink,
                                 configuration: StageRunnerConfiguration(processingTimeout: .milliseconds(100)),
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 1) == 10 })
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 0) == 0 })
        }
        #expect(transport.outputIds().sorted() == (["long"] + (0..<10).map { "m\($0)" }).sorted())
        let dead = transport.records(in: "receipts.dead-letter")
        #expect(dead.count == 1)
        #expect(dead.first.map { transport.header(RecordHeaders.reason, of: $0) } == "timeout")
    }
}

/// A ``ClosureStage`` whose only waits are a state store's (``StageWaiting/deliveries``).
private struct StoreStage: Stage {
    typealias Input = TestMessage
    typealias Output = StoreStageOutput
    static var name: StageName { .verify }
    static var waitsOn: StageWaiting { .deliveries }

    let body: @Sendable (TestMessage, StageContext) async throws -> StageResult<StoreStageOutput>

    func process(_ input: TestMessage, context: StageContext) async throws -> StageResult<StoreStageOutput> {
        try await body(input, context)
    }
}

/// A test output that is either a state output (pinned to the input's partition, on
/// `entitlements.changed`) or another one (on `receipts.verified`, by key).
private struct StoreStageOutput: OutboundMessage, Decodable {
    static var outputTopic: OutputTopic { .verified }
    var id: String
    var recordKey: String
    var isState: Bool
    var topic: OutputTopic { isState ? .entitlementsChanged : .verified }
    var messagePartitioning: OutputPartitioning { isState ? .inputPartition : .byKey }
}

/// Passes sends on to a sink and keeps what each one held.
private final class RecordingSink: RecordSink {
    private let sink: any RecordSink
    private let log = Probe<[[OutboundRecord]]>([])

    init(_ sink: any RecordSink) { self.sink = sink }

    var sends: [[OutboundRecord]] { log.value }

    func send(_ records: [OutboundRecord]) async throws {
        log.update { $0.append(records) }
        try await sink.send(records)
    }

    func discardUnsent() async { await sink.discardUnsent() }
}
