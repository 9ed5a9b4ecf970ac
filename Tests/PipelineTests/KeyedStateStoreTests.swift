import AppStore
import Foundation
import Observability
import Testing
@testable import Pipeline

private struct AcknowledgementLost: Error {}

/// A sink that writes every batch and fails once the ledger record (pinned to the input's
/// partition) is written, as a worker that crashed after all its outputs reached the broker but
/// before it saw the last acknowledgement.
private struct WriteThenFailSink: RecordSink {
    let inner: InMemoryRecordSink

    func send(_ records: [OutboundRecord]) async throws {
        try await inner.send(records)
        if records.contains(where: { $0.partition != nil }) { throw AcknowledgementLost() }
    }
}

/// A sink that writes only the first record of a batch and then fails, as a worker that crashed
/// after one of its outputs was acknowledged and before the others were.
private struct WriteFirstThenFailSink: RecordSink {
    let inner: InMemoryRecordSink

    func send(_ records: [OutboundRecord]) async throws {
        try await inner.send(Array(records.prefix(1)))
        throw AcknowledgementLost()
    }
}

/// A reader that waits for a gate before reading.
private struct GatedReader: PartitionLogReader {
    let inner: InMemoryPartitionLogReader
    let gate: Gate

    func read(topic: String, partitions: [Int32], _ body: (InboundRecord) throws -> Void) async throws {
        try await gate.wait()
        try await inner.read(topic: topic, partitions: partitions, body)
    }
}

/// Fulfil's Kafka-backed purchase ledger (``KeyedStateStore/purchaseLedger(reader:topic:logger:)``)
/// over the in-memory transport: `entitlements.changed` is the ledger, rebuilt when a partition is
/// assigned, and records wait until it is.
@Suite(.timeLimit(.minutes(1)))
struct KeyedStateStoreTests {
    let verified = "receipts.verified"
    let changed = "entitlements.changed"

    private func transport() -> InMemoryTransport {
        InMemoryTransport(partitions: ["receipts.verified": 2, "entitlements.changed": 2])
    }

    private func ledger(_ transport: InMemoryTransport, reader: (any PartitionLogReader)? = nil) -> KeyedStateStore<PurchaseState> {
        .purchaseLedger(reader: reader ?? transport.logReader, topic: changed, logger: .disabled)
    }

    private func runner(_ transport: InMemoryTransport, ledger: KeyedStateStore<PurchaseState>, sink: (any RecordSink)? = nil,
                        now: Date = Fixtures.now) -> StageRunner<FulfilStage> {
        StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: ledger),
                    source: transport.source(group: "fulfil", topics: [verified]), sink: sink ?? transport.sink,
                    assignmentHook: ledger, logger: .disabled, metrics: MetricsRegistry(), clock: { now })
    }

    private func coins(_ id: String, revoked: String? = nil) -> VerifiedTransaction {
        Fixtures.transaction(id: id, productId: "com.demo.coins.100", type: .consumable, expires: nil, revoked: revoked)
    }

    private func publish(_ transport: InMemoryTransport, _ transaction: VerifiedTransaction, partition: Int32) throws {
        transport.produce(topic: verified, key: Array(transaction.originalTransactionId.utf8),
                          value: try ContractCoding.encode(Fixtures.verified(transaction)), partition: partition)
    }

    /// The events a previous worker emitted for `transactions`, applied in order.
    private func events(_ transactions: [VerifiedTransaction], now: Date = Fixtures.now) async throws -> [EntitlementChanged] {
        let previous = FulfilStage(catalogue: Fixtures.catalogue, ledger: KeyedStateStore())
        var events: [EntitlementChanged] = []
        for transaction in transactions {
            let result = try await previous.process(Fixtures.verified(transaction, submissionId: "earlier"),
                                                    context: StageContext(now: now))
            events += try result.outputs().compactMap(\.event)
        }
        return events
    }

    /// Writes what a previous owner of `partition` emitted.
    private func write(_ events: [EntitlementChanged], to transport: InMemoryTransport, partition: Int32) throws {
        for event in events {
            transport.produce(topic: changed, key: Array(event.owner.encoded.utf8), value: try ContractCoding.encode(event),
                              partition: partition)
        }
    }

    private func outcomes(_ transport: InMemoryTransport) throws -> [String] {
        try transport.records(in: "receipts.outcomes").map {
            try ContractCoding.decode(ReceiptOutcome.self, from: $0.value).outcome.rawValue
        }
    }

    private func changes(_ transport: InMemoryTransport, partition: Int32) throws -> [EntitlementChanged] {
        try transport.records(in: changed, partition: partition).map { try ContractCoding.decode(EntitlementChanged.self, from: $0.value) }
    }

    private func processed(_ transport: InMemoryTransport, through offset: Int64, partition: Int32) async -> Bool {
        await transport.waitUntil { $0.storedOffset(group: "fulfil", topic: "receipts.verified", partition: partition) == offset }
    }

    @Test func theLedgerIsRebuiltFromTheOutputPartitionAndARedeliveredInputIsSuppressed() async throws {
        let transport = transport()
        // A previous worker emitted 1001's grant to partition 1, then died before storing the offset.
        try write(await events([coins("1001")]), to: transport, partition: 1)
        try publish(transport, coins("1001"), partition: 1)
        try publish(transport, coins("1002"), partition: 1)
        let ledger = ledger(transport)
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await processed(transport, through: 1, partition: 1))
            #expect(ledger.installedPartitions == [0, 1])
            #expect(ledger.keyCount(in: 1) == 2)
        }
        #expect(try outcomes(transport) == ["duplicate-suppressed"])
        #expect(try changes(transport, partition: 1).map(\.transactionId) == ["1001", "1002"])
        #expect(transport.records(in: changed, partition: 0).isEmpty)
        #expect(transport.records(in: "entitlements.owner-updates").count == 1, "only 1002's")
        #expect(ledger.installedPartitions.isEmpty, "the runner released its partitions when it stopped")
    }

    @Test func recordsOfAPartitionWaitUntilItsLedgerIsReady() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let gate = Gate()
        let ledger = ledger(transport, reader: GatedReader(inner: transport.logReader, gate: gate))
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await transport.waitUntil { $0.pausedPartitions(group: "fulfil").count == 2 })
            #expect(transport.records(in: changed).isEmpty)
            #expect(ledger.installedPartitions.isEmpty)
            // Meanwhile the output partition gets the grant (a previous owner finishing): the rebuild sees it.
            try write(await events([coins("1001")]), to: transport, partition: 0)
            gate.open()
            #expect(await processed(transport, through: 0, partition: 0))
        }
        #expect(transport.records(in: changed).count == 1)
        #expect(try outcomes(transport) == ["duplicate-suppressed"])
    }

    @Test func outputWrittenButNotAcknowledgedBeforeACrashIsNotEmittedAgain() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let ledger = ledger(transport)
        // The outputs reach their topics, the acknowledgement is lost: the runner stops, offset not stored.
        let crashed = runner(transport, ledger: ledger, sink: WriteThenFailSink(inner: transport.sink))
        await #expect(throws: StageRunnerError.self) { try await crashed.run() }
        #expect(transport.storedOffset(group: "fulfil", topic: verified, partition: 0) == nil)
        #expect(transport.records(in: changed).count == 1)
        #expect(transport.records(in: "entitlements.owner-updates").count == 1)
        // Restarted (same store object: its memory is not what counts; the rebuild is).
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await processed(transport, through: 0, partition: 0))
        }
        #expect(transport.records(in: changed).count == 1)
        #expect(transport.records(in: "entitlements.owner-updates").count == 1)
        #expect(try outcomes(transport) == ["duplicate-suppressed"])
    }

    @Test func outputThatNeverReachedTheTopicIsEmittedOnceAfterARestart() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let ledger = ledger(transport)
        transport.setSendFailure { _ in AcknowledgementLost() }
        await #expect(throws: StageRunnerError.self) { try await runner(transport, ledger: ledger).run() }
        #expect(transport.records(in: changed).isEmpty)
        transport.setSendFailure(nil)
        // The update made before the failure was withdrawn: the restarted worker grants.
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await processed(transport, through: 0, partition: 0))
        }
        #expect(try changes(transport, partition: 0).map(\.action) == [.grant])
        #expect(transport.records(in: "entitlements.owner-updates").count == 1)
        #expect(try outcomes(transport).isEmpty)
    }

    /// The ledger knows only `entitlements.changed`: when a worker dies after the event was
    /// acknowledged but before its owner update was, the redelivered input is a duplicate and the
    /// owner update is never written, so the owner view misses the purchase.
    /// The runner acknowledges fulfil's owner updates before the event (the ledger record): a
    /// crash between them leaves no event, so the redelivered input is applied and emitted again.
    @Test func aCrashBetweenTheOwnerUpdateAndTheEventLosesNeither() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let ledger = ledger(transport)
        let crashed = runner(transport, ledger: ledger, sink: WriteFirstThenFailSink(inner: transport.sink))
        await #expect(throws: StageRunnerError.self) { try await crashed.run() }
        #expect(transport.records(in: changed).isEmpty, "the event waits for the owner update's acknowledgement")
        #expect(transport.records(in: "entitlements.owner-updates").count == 1)
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await processed(transport, through: 0, partition: 0))
        }
        #expect(transport.records(in: changed).count == 1)
        let updates = try transport.records(in: "entitlements.owner-updates").map {
            try ContractCoding.decode(OwnerPurchaseUpdate.self, from: $0.value)
        }
        #expect(updates.count == 2 && updates.allSatisfy { $0.purchase.version == 1 }, "re-sent; the owner view ignores the copy")
    }

    @Test func theHighestVersionOfAPurchaseWinsAndUndecodableRecordsAreSkipped() async throws {
        let transport = transport()
        let history = try await events([coins("1001"), coins("1001", revoked: "2026-11-30T05:45:00Z")])
        #expect(history.map(\.purchase.version) == [1, 2])
        let v1Document = #"{"schema":"entitlement-changed/v1","eventId":"x","action":"grant","transactionId":"1001"}"#
        for value in [Array("not json".utf8), Array(v1Document.utf8)] {
            transport.produce(topic: changed, key: nil, value: value, partition: 0)
        }
        // The revocation before the grant (as a replayed copy could land): order in the log does not matter.
        try write(history.reversed(), to: transport, partition: 0)
        try publish(transport, coins("1001", revoked: "2026-11-30T05:45:00Z"), partition: 0)
        let ledger = ledger(transport)
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await processed(transport, through: 0, partition: 0))
            #expect(ledger.keyCount(in: 0) == 1)
            #expect(ledger.value(of: "1001", in: 0) == history.last?.purchase)
        }
        #expect(try outcomes(transport) == ["duplicate-suppressed"])
        #expect(transport.records(in: changed, partition: 0).count == 4, "nothing emitted again")
    }

    @Test func afterARebuildAnOlderPeriodIsStaleButItsRefundIsStillApplied() async throws {
        let transport = transport()
        let first = Fixtures.transaction(id: "1001")
        let newer = Fixtures.transaction(id: "1003", original: "1001", purchase: "2027-01-30T05:00:00Z",
                                         expires: "2027-02-28T05:00:00Z", signed: "2027-01-30T05:00:00Z")
        let older = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                         expires: "2027-01-30T05:00:00Z", signed: "2026-12-30T05:00:00Z")
        let olderRefund = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                               expires: "2027-01-30T05:00:00Z", revoked: "2027-01-02T00:00:00Z",
                                               signed: "2027-01-02T00:00:00Z")
        let now = Fixtures.date("2027-02-01T00:00:00Z")
        try write(await events([first, newer], now: now), to: transport, partition: 1)
        try publish(transport, older, partition: 1)
        try publish(transport, olderRefund, partition: 1)
        try await whileRunning(runner(transport, ledger: ledger(transport), now: now)) {
            #expect(await processed(transport, through: 1, partition: 1))
        }
        #expect(try outcomes(transport) == ["stale-suppressed"])
        let emitted = try changes(transport, partition: 1)
        #expect(emitted.map(\.change) == [.purchase, .renewal, .pastPeriodRefund])
        #expect(emitted.last?.status == .active && emitted.last?.purchase.latestTransactionId == "1003")
    }

    @Test func updatesNeedTheScopeAndAnInstalledPartition() async throws {
        let ledger = ledger(transport())
        let body: (PurchaseState?) -> (PurchaseState?, Bool) = { current in (nil, current == nil) }
        await #expect(throws: FulfilmentLedgerError.self) { _ = try await ledger.update("1", scope: nil, body) }
        await #expect(throws: FulfilmentLedgerError.self) {
            _ = try await ledger.update("1", scope: DeliveryScope(partition: 0), body)
        }
        let tp = TopicPartition(topic: verified, partition: 0)
        let tier = TopicPartition(topic: verified + ".retry.1", partition: 0)
        try await ledger.prepare([tp, tier], epoch: AssignmentEpoch(1))
        #expect(try await ledger.update("1", scope: DeliveryScope(partition: 0, epoch: AssignmentEpoch(1)), body))
        await #expect(throws: FulfilmentLedgerError.self) {
            _ = try await ledger.update("1", scope: DeliveryScope(partition: 1), body)
        }
        await ledger.release([tp])
        #expect(ledger.installedPartitions == [0], "the tier's partition 0 still uses state partition 0")
        await ledger.release([tier])
        #expect(ledger.installedPartitions.isEmpty)
    }
}
