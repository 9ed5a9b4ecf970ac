import Foundation
import Observability
import Synchronization
import Testing
@testable import Pipeline

private struct AcknowledgementLost: Error {}

/// A sink that writes a batch and then fails, as a worker that crashed after its output reached
/// the broker but before it saw the acknowledgement.
private struct WriteThenFailSink: RecordSink {
    let inner: InMemoryRecordSink

    func send(_ records: [OutboundRecord]) async throws {
        try await inner.send(records)
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

/// ``KafkaFulfilmentLedger`` over the in-memory transport: the output partition is the ledger,
/// rebuilt on assignment, and records wait until it is.
@Suite(.timeLimit(.minutes(1)))
struct KafkaFulfilmentLedgerTests {
    let verified = "receipts.verified"
    let changed = "entitlements.changed"

    private func transport() -> InMemoryTransport {
        InMemoryTransport(partitions: ["receipts.verified": 2, "entitlements.changed": 2])
    }

    private func ledger(_ transport: InMemoryTransport, reader: (any PartitionLogReader)? = nil) -> KafkaFulfilmentLedger {
        KafkaFulfilmentLedger(reader: reader ?? transport.logReader, topic: changed, logger: .disabled)
    }

    private func runner(_ transport: InMemoryTransport, ledger: KafkaFulfilmentLedger, sink: (any RecordSink)? = nil,
                        now: Date = Fixtures.now) -> StageRunner<FulfilStage> {
        StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: ledger),
                    source: transport.source(group: "fulfil", topics: [verified]), sink: sink ?? transport.sink,
                    assignmentHook: ledger, logger: .disabled, metrics: MetricsRegistry(), clock: { now })
    }

    private func coins(_ id: String) -> VerifiedTransaction {
        Fixtures.transaction(id: id, productId: "com.demo.coins.100", type: .consumable, expires: nil)
    }

    @discardableResult
    private func publish(_ transport: InMemoryTransport, _ transaction: VerifiedTransaction, partition: Int32) throws -> RecordPosition {
        transport.produce(topic: verified, key: Array(transaction.originalTransactionId.utf8),
                          value: try ContractCoding.encode(Fixtures.verified(transaction)), partition: partition)
    }

    /// What a previous owner of `partition` emitted.
    private func emitted(_ transport: InMemoryTransport, _ transaction: VerifiedTransaction, action: EntitlementAction,
                         partition: Int32) throws {
        let change = EntitlementChanged(action: action, bundleId: "com.example.game", userId: "user-1", entitlement: "x",
                                        productId: transaction.productId, productType: .autoRenewable,
                                        transactionId: transaction.transactionId,
                                        originalTransactionId: transaction.originalTransactionId, quantity: nil,
                                        validUntil: transaction.revocationDate ?? transaction.expiresDate,
                                        effectiveAt: Fixtures.now, environment: "Sandbox", submissionId: "earlier",
                                        signedDate: transaction.signedDate)
        transport.produce(topic: changed, key: Array("com.example.game/user-1".utf8), value: try ContractCoding.encode(change),
                          partition: partition)
    }

    private func outcomes(_ transport: InMemoryTransport) -> [String] {
        transport.records(in: "receipts.outcomes").map {
            try! ContractCoding.decode(ReceiptOutcome.self, from: $0.value).outcome.rawValue
        }
    }

    @Test func theLedgerIsRebuiltFromTheOutputPartitionAndSuppressesWhatWasEmitted() async throws {
        let transport = transport()
        // A previous worker emitted 1001's grant to partition 1, then died before storing the offset.
        try emitted(transport, coins("1001"), action: .grant, partition: 1)
        try publish(transport, coins("1001"), partition: 1)
        try publish(transport, coins("1002"), partition: 1)
        let ledger = ledger(transport)
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "fulfil", topic: "receipts.verified", partition: 1) == 1 })
            #expect(ledger.installedPartitions == [0, 1])
            #expect(ledger.eventCount(in: 1) == 2)
        }
        #expect(outcomes(transport) == ["duplicate-suppressed"])
        let changes = transport.records(in: changed, partition: 1).map { try! ContractCoding.decode(EntitlementChanged.self, from: $0.value) }
        #expect(changes.map(\.transactionId) == ["1001", "1002"])
        #expect(transport.records(in: changed, partition: 0).isEmpty)
        #expect(ledger.installedPartitions.isEmpty, "the runner released its partitions when it stopped")
    }

    @Test func recordsOfAPartitionWaitUntilItsLedgerIsReady() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let gate = Gate()
        let ledger = ledger(transport, reader: GatedReader(inner: transport.logReader, gate: gate))
        let runner = runner(transport, ledger: ledger)
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.pausedPartitions(group: "fulfil").count == 2 })
            #expect(transport.records(in: changed).isEmpty)
            #expect(ledger.installedPartitions.isEmpty)
            // Meanwhile the output partition gets the grant (a previous owner finishing): the rebuild sees it.
            try emitted(transport, coins("1001"), action: .grant, partition: 0)
            gate.open()
            #expect(await transport.waitUntil { $0.storedOffset(group: "fulfil", topic: "receipts.verified", partition: 0) == 0 })
        }
        #expect(transport.records(in: changed).count == 1)
        #expect(outcomes(transport) == ["duplicate-suppressed"])
    }

    @Test func outputWrittenButNotAcknowledgedBeforeACrashIsNotEmittedAgain() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let ledger = ledger(transport)
        // The output reaches the topic, the acknowledgement is lost: the runner stops, offset not stored.
        let crashed = runner(transport, ledger: ledger, sink: WriteThenFailSink(inner: transport.sink))
        await #expect(throws: StageRunnerError.self) { try await crashed.run() }
        #expect(transport.storedOffset(group: "fulfil", topic: verified, partition: 0) == nil)
        #expect(transport.records(in: changed).count == 1)
        // Restarted (same ledger object: its memory is not what counts; the rebuild is).
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "fulfil", topic: "receipts.verified", partition: 0) == 0 })
        }
        #expect(transport.records(in: changed).count == 1)
        #expect(outcomes(transport) == ["duplicate-suppressed"])
    }

    @Test func outputThatNeverReachedTheTopicIsEmittedOnceAfterARestart() async throws {
        let transport = transport()
        try publish(transport, coins("1001"), partition: 0)
        let ledger = ledger(transport)
        transport.setSendFailure { _ in AcknowledgementLost() }
        await #expect(throws: StageRunnerError.self) { try await runner(transport, ledger: ledger).run() }
        #expect(transport.records(in: changed).isEmpty)
        transport.setSendFailure(nil)
        // The claim made before the failure was withdrawn: the restarted worker grants.
        try await whileRunning(runner(transport, ledger: ledger)) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "fulfil", topic: "receipts.verified", partition: 0) == 0 })
        }
        #expect(transport.records(in: changed).count == 1)
        #expect(outcomes(transport).isEmpty)
    }

    @Test func afterARebuildAnOlderRenewalIsStaleButAnOlderRefundStillRevokes() async throws {
        let transport = transport()
        let newer = Fixtures.transaction(id: "1003", original: "1001", purchase: "2027-01-30T05:00:00Z",
                                         expires: "2027-02-28T05:00:00Z", signed: "2027-01-30T05:00:00Z")
        let older = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                         expires: "2027-01-30T05:00:00Z", signed: "2026-12-30T05:00:00Z")
        let olderRefund = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                               expires: "2027-01-30T05:00:00Z", revoked: "2027-01-02T00:00:00Z",
                                               signed: "2027-01-02T00:00:00Z")
        try emitted(transport, newer, action: .renew, partition: 1)
        try publish(transport, older, partition: 1)
        try publish(transport, olderRefund, partition: 1)
        let ledger = ledger(transport)
        try await whileRunning(runner(transport, ledger: ledger, now: Fixtures.date("2027-02-01T00:00:00Z"))) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "fulfil", topic: "receipts.verified", partition: 1) == 1 })
        }
        #expect(outcomes(transport) == ["stale-suppressed"])
        let actions = transport.records(in: changed, partition: 1).map {
            try! ContractCoding.decode(EntitlementChanged.self, from: $0.value).action
        }
        #expect(actions == [.renew, .revoke])
    }

    @Test func claimsNeedTheScopeAndAnInstalledPartition() async throws {
        let ledger = KafkaFulfilmentLedger(reader: transport().logReader, topic: changed, logger: .disabled)
        let event = LedgerEvent(coinsChange: coins("1"))
        await #expect(throws: FulfilmentLedgerError.self) { _ = try await ledger.claim(event, scope: nil) }
        await #expect(throws: FulfilmentLedgerError.self) {
            _ = try await ledger.claim(event, scope: DeliveryScope(partition: 0))
        }
        let tp = TopicPartition(topic: verified, partition: 0)
        let tier = TopicPartition(topic: verified + ".retry.1", partition: 0)
        try await ledger.prepare([tp, tier])
        #expect(try await ledger.claim(event, scope: DeliveryScope(partition: 0)) == .firstTime)
        await ledger.release([tp])
        #expect(ledger.installedPartitions == [0], "the tier's partition 0 still uses ledger partition 0")
        await ledger.release([tier])
        #expect(ledger.installedPartitions.isEmpty)
    }
}

private extension LedgerEvent {
    init(coinsChange transaction: VerifiedTransaction) {
        self.init(eventId: EntitlementChanged.eventId(transactionId: transaction.transactionId, action: .grant), action: .grant,
                  transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
                  signedDate: transaction.signedDate, validUntil: nil)
    }
}
