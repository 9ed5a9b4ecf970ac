import Foundation
import Observability
import Testing
@testable import Pipeline

/// The stages chained over one in-memory cluster (ingest, verify, fulfil and the owner view), each
/// its own consumer group.
@Suite(.timeLimit(.minutes(1)))
struct PipelineFlowTests {
    @Test func submissionsFlowToEntitlementsAndEverySubmissionIsAccountedFor() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 3)
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "test", level: .trace, handler: handler)
        let metrics = MetricsRegistry()
        let verifier = ClosureSubmissionVerifier(supportedKinds: [.signedTransaction, .transactionId]) { submission, _ in
            switch submission.submissionId {
            case "renewal": return [Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                                         expires: "2027-01-30T05:00:00Z", signed: "2026-12-30T05:00:00Z")]
            case "coins": return [Fixtures.transaction(id: "3001", productId: "com.demo.coins.100", type: .consumable,
                                                       quantity: 2, expires: nil)]
            case "mystery": return [Fixtures.transaction(id: "4001", productId: "com.demo.mystery", type: .consumable)]
            default: return [Fixtures.transaction(id: "1001", original: "1001")]
            }
        }
        let submissions: [(String, [String: Any?])] = [
            ("first", [:]), ("resubmitted", [:]), ("renewal", [:]), ("coins", [:]), ("mystery", [:]),
            ("garbage", ["payload": "not-a-jws"]), ("receipt", ["kind": "appReceipt", "payload": "AQID"]),
        ]
        for (id, overrides) in submissions {
            var fields = overrides
            fields["submissionId"] = id
            transport.produce(topic: "receipts.submitted", key: Array("com.example.game/user-1".utf8),
                              value: Fixtures.submission(fields))
        }
        let topics = Topics()
        func make<S: Stage>(_ stage: S) -> StageRunner<S> {
            StageRunner(stage: stage, source: transport.source(group: S.name.rawValue, topics: [topics.input(of: S.name)]),
                        sink: transport.sink, logger: logger, metrics: metrics, clock: { Fixtures.now })
        }
        let ingest = make(IngestStage())
        let verify = make(VerifyStage(verifier: verifier))
        let fulfil = make(FulfilStage(catalogue: Fixtures.catalogue, ledger: KeyedStateStore()))
        let owners = make(OwnersStage(store: KeyedStateStore()))

        // Every submission ends in exactly one terminal record: a change, a rejection or an outcome.
        @Sendable func terminalCount(_ t: InMemoryTransport) -> Int {
            t.records(in: "entitlements.changed").count + t.records(in: "receipts.rejected").count
                + t.records(in: "receipts.outcomes").count
        }
        let expected = submissions.count
        try await whileRunning(ingest) {
            try await whileRunning(verify) {
                try await whileRunning(fulfil) {
                    try await whileRunning(owners) {
                        #expect(await transport.waitUntil {
                            terminalCount($0) == expected && $0.records(in: "entitlements.state").count == 3
                        })
                    }
                }
            }
        }

        let changes = try transport.records(in: "entitlements.changed").map {
            try ContractCoding.decode(EntitlementChanged.self, from: $0.value)
        }
        #expect(Set(changes.map(\.submissionId)) == ["first", "renewal", "coins"])
        #expect(changes.first { $0.submissionId == "renewal" }?.action == .renew)
        #expect(changes.first { $0.submissionId == "coins" }?.quantity == 200)
        #expect(transport.records(in: "entitlements.owner-updates").count == changes.count)
        // The owner view: the last state per entitlement.
        let states = try transport.records(in: "entitlements.state").map {
            try ContractCoding.decode(EntitlementState.self, from: $0.value)
        }
        let latest = Dictionary(states.map { ($0.entitlement, $0) }) { _, last in last }
        #expect(latest["premium"]?.hasAccess == true)
        #expect(latest["premium"]?.validUntil == Fixtures.date("2027-01-30T05:00:00Z"))
        #expect(latest["coins"]?.units == 200)
        let outcomes = try transport.records(in: "receipts.outcomes").map {
            try ContractCoding.decode(ReceiptOutcome.self, from: $0.value)
        }
        #expect(outcomes.map(\.submissionId) == ["resubmitted"])
        #expect(outcomes.first?.outcome == .duplicateSuppressed)
        let rejected = try transport.records(in: "receipts.rejected").map {
            try ContractCoding.decode(ReceiptRejected.self, from: $0.value)
        }
        let reasons = Dictionary(uniqueKeysWithValues: rejected.map { ($0.submissionId!, "\($0.stage):\($0.reason)") })
        #expect(reasons == ["garbage": "ingest:malformed-payload", "receipt": "verify:unsupported-kind",
                            "mystery": "fulfil:unknown-product"])
        #expect(transport.records(in: "receipts.dead-letter").isEmpty)

        // Logs carry ids and hashes, never the payload.
        #expect(!handler.records.isEmpty)
        for record in handler.records {
            #expect(!record.message.contains(Fixtures.jws))
            for value in record.metadata.values { #expect(!value.description.contains(Fixtures.jws)) }
        }
        // A stage's own log line carries its record's position and submission (the runner's
        // per-record logger): fulfil's line for the re-submitted purchase.
        let unchanged = try #require(handler.records.first { $0.message == "purchase unchanged" })
        #expect(unchanged.metadata[LoggingKeys.submissionId] == "resubmitted")
        #expect(unchanged.metadata[LoggingKeys.kafkaTopic] == .string(topics.verified))
        #expect(unchanged.metadata[LoggingKeys.kafkaPartition] != nil)
        #expect(unchanged.metadata[LoggingKeys.kafkaOffset] != nil)
        #expect(unchanged.metadata[LoggingKeys.stageAttempt] == 1)
        #expect(unchanged.metadata[LoggingKeys.transactionIdHash] == .string(String(SHA256.hexDigest("1001").prefix(16))))
        // Transaction ids appear hashed (the first 16 hex digits of their SHA-256), never as themselves.
        let hashed = Set(handler.records.compactMap { $0.metadata[LoggingKeys.transactionIdHash]?.description })
        #expect(hashed.contains(String(SHA256.hexDigest("4001").prefix(16))), "the unknown product's rejection")
        for record in handler.records {
            for (key, value) in record.metadata where key.hasPrefix("receipt.") {
                #expect(!["1001", "1002", "3001", "4001"].contains(value.description), "\(key) in \(record.message)")
            }
        }
        #expect(metrics.value("receiptd_stage_records_total", labels: [("stage", "ingest"), ("outcome", "emitted")]) == 6)
        #expect(metrics.value("receiptd_stage_records_total", labels: [("stage", "fulfil"), ("outcome", "done")]) == 1)
    }
}
