import Foundation
import Observability
import Testing
@testable import Pipeline

/// Fulfil's events go to the partition number of their input (``OutputPartitioning/inputPartition``),
/// whatever their key; so do its retry records. Its owner updates, and other stages, keep
/// partitioning by key.
@Suite(.timeLimit(.minutes(1)))
struct CoPartitioningTests {
    private func verifiedRecord(_ id: String) throws -> [UInt8] {
        try ContractCoding.encode(Fixtures.verified(Fixtures.transaction(id: id, productId: "com.demo.coins.100",
                                                                         type: .consumable, expires: nil)))
    }

    @Test func entitlementChangesLandInTheInputsPartitionKeyedByOwner() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 4)
        for p: Int32 in 0..<4 {
            transport.produce(topic: "receipts.verified", key: Array("10\(p)".utf8), value: try verifiedRecord("10\(p)"),
                              partition: p)
        }
        let runner = StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: KeyedStateStore()),
                                 source: transport.source(group: "f", topics: ["receipts.verified"]),
                                 sink: transport.sink, logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.records(in: "entitlements.changed").count == 4 })
        }
        for p: Int32 in 0..<4 {
            let records = transport.records(in: "entitlements.changed", partition: p)
            #expect(records.count == 1)
            let change = try ContractCoding.decode(EntitlementChanged.self, from: records[0].value)
            #expect(change.transactionId == "10\(p)")
            #expect(records[0].key.map { String(decoding: $0, as: UTF8.self) } == "com.example.game/user-1")
        }
        // The owner updates of one owner's entitlement meet in one partition, whichever inputs they came from.
        let updates = transport.records(in: "entitlements.owner-updates")
        #expect(updates.count == 4)
        #expect(Set(updates.map(\.partition)).count == 1)
        #expect(Set(updates.compactMap { $0.key.map { String(decoding: $0, as: UTF8.self) } }) == ["com.example.game/user-1/coins"])
    }

    @Test func retryRecordsOfACoPartitionedStageStayInTheInputsPartition() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 4)
        transport.produce(topic: "receipts.verified", key: Array("a-key".utf8), value: try verifiedRecord("1"), partition: 3)
        // A Kafka-backed ledger the runner never prepares: every record finds its state not ready (transient).
        let unready = KeyedStateStore.purchaseLedger(reader: transport.logReader, topic: "entitlements.changed", logger: .disabled)
        let runner = StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: unready),
                                 source: transport.source(group: "f", topics: ["receipts.verified"]),
                                 sink: transport.sink, retryPolicy: TieredRetryPolicy(delays: [.seconds(60)]),
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { !$0.records(in: "receipts.verified.retry.1").isEmpty })
        }
        let retried = transport.records(in: "receipts.verified.retry.1", partition: 3)
        #expect(retried.count == 1)
        #expect(retried.first.flatMap { transport.header(RecordHeaders.reason, of: $0) } == "ledger-unavailable")
    }

    @Test func otherStagesStillPartitionByKey() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 4)
        for i in 0..<8 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)"), partition: 0) }
        let runner = StageRunner(stage: ClosureStage.echo, source: transport.source(group: "g", topics: ["receipts.ingested"]),
                                 sink: transport.sink, logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.records(in: "receipts.verified").count == 8 })
        }
        #expect(Set(transport.records(in: "receipts.verified").map(\.partition)).count > 1)
    }

    @Test func anExplicitPartitionTheTopicLacksFailsTheSend() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 2)
        await #expect(throws: InMemoryRecordSink.UnknownPartitionError.self) {
            try await transport.sink.send([OutboundRecord(topic: "t", key: nil, value: [1], partition: 2)])
        }
        try await transport.sink.send([OutboundRecord(topic: "t", key: nil, value: [1], partition: 1)])
        #expect(transport.records(in: "t", partition: 1).count == 1)
        #expect(transport.records(in: "t").count == 1)
    }

    @Test func workersRefuseTopicsThatBreakCoPartitioning() throws {
        let fine = CoPartitioningCheck(input: ("receipts.verified", 8), tiers: [("receipts.verified.retry.1", 8)],
                                       output: ("entitlements.changed", 8))
        try fine.validate()
        try CoPartitioningCheck(input: ("receipts.verified", 8), tiers: [], output: ("entitlements.changed", 12)).validate()
        let fewerOutputs = CoPartitioningCheck(input: ("receipts.verified", 8), tiers: [], output: ("entitlements.changed", 4))
        #expect(throws: PipelineConfigurationError.self) { try fewerOutputs.validate() }
        do { try fewerOutputs.validate() } catch let error as PipelineConfigurationError {
            #expect(error.message.hasPrefix("entitlements.changed has 4 partitions but receipts.verified has 8"))
        }
        let unequalTier = CoPartitioningCheck(input: ("receipts.verified", 8), tiers: [("receipts.verified.retry.2", 16)],
                                              output: ("entitlements.changed", 8))
        #expect(throws: PipelineConfigurationError.self) { try unequalTier.validate() }
    }
}
