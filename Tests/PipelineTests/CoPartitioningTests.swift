import Foundation
import Observability
import Testing
@testable import Pipeline

private struct LedgerDown: Error {}

/// A ledger that always fails (transiently): sends every record to a retry tier.
private struct FailingLedger: FulfilmentLedger {
    func claim(_ event: LedgerEvent, scope: DeliveryScope?) async throws -> ClaimResult { throw LedgerDown() }
}

/// Fulfil's outputs go to the partition number of their input (``OutputPartitioning/inputPartition``),
/// whatever their key; so do its retry records. Other stages keep partitioning by key.
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
        let runner = StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: InMemoryFulfilmentLedger()),
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
    }

    @Test func retryRecordsOfACoPartitionedStageStayInTheInputsPartition() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 4)
        transport.produce(topic: "receipts.verified", key: Array("a-key".utf8), value: try verifiedRecord("1"), partition: 3)
        let runner = StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: FailingLedger()),
                                 source: transport.source(group: "f", topics: ["receipts.verified"]),
                                 sink: transport.sink, retryPolicy: TieredRetryPolicy(delays: [.seconds(60)]),
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { !$0.records(in: "receipts.verified.retry.1").isEmpty })
        }
        #expect(transport.records(in: "receipts.verified.retry.1", partition: 3).count == 1)
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
