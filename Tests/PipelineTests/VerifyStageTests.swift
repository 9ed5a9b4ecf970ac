import AppStore
import Foundation
import Observability
import Testing
@testable import Pipeline

private struct NetworkDown: Error, CustomStringConvertible {
    var description: String { "connection reset" }
}

@Suite(.timeLimit(.minutes(1)))
struct VerifyStageTests {
    /// A fake verifier: a renewal chain for signed transactions, classified failures on demand.
    static let fake = ClosureSubmissionVerifier(supportedKinds: [.signedTransaction, .transactionId]) { submission, _ in
        switch submission.submissionId {
        case "forged": throw StageError.permanent("invalid-signature", "signature does not verify")
        case "flaky": throw StageError.transient("app-store-unavailable", "503 from the App Store")
        case "network": throw NetworkDown()
        case "empty": return []
        default:
            return [Fixtures.transaction(id: "1001", original: "1001"), Fixtures.transaction(id: "1002", original: "1001"),
                    Fixtures.transaction(id: "2001", productId: "com.demo.unlock.pro", type: .nonConsumable, expires: nil)]
        }
    }

    @Test func emitsOneRecordPerTransactionKeyedByOriginalTransactionId() async throws {
        let result = try await VerifyStage(verifier: Self.fake).process(Fixtures.ingested(), context: Fixtures.context())
        guard case .emit(let messages) = result else { Issue.record("\(result)"); return }
        #expect(messages.map(\.transaction.transactionId) == ["1001", "1002", "2001"])
        #expect(messages.map(\.recordKey) == ["1001", "1001", "2001"])
        #expect(messages.allSatisfy { $0.submissionId == "sub-1" && $0.verifiedAt == Fixtures.now })
    }

    @Test func unsupportedKindIsRejectedWithoutCallingTheVerifier() async throws {
        let called = Probe(false)
        let verifier = ClosureSubmissionVerifier(supportedKinds: [.signedTransaction]) { _, _ in
            called.update { $0 = true }
            return []
        }
        let result = try await VerifyStage(verifier: verifier).process(Fixtures.ingested(kind: .appReceipt, payload: "AQID"),
                                                                         context: Fixtures.context())
        guard case .reject(let reason, _, _) = result else { Issue.record("\(result)"); return }
        #expect(reason == .unsupportedKind)
        #expect(!called.value)
    }

    /// What the runner may batch: submissions the verifier checks offline; App Store requests get a
    /// task each under the processing timeout.
    @Test func onlyAppStoreRequestsMayWaitOnTheOutside() throws {
        let signed = try SignedDataVerifier(configuration: SignedDataVerifierConfiguration(
            trustAnchors: [LifecycleHarness.pki.root], environment: .any))
        let receipts = try AppReceiptVerifier()
        let local = VerifyStage(verifier: AppStoreSubmissionVerifier(
            verifier: signed, legacy: LegacyReceiptVerification(mode: .local, receiptVerifier: receipts)))
        let remote = VerifyStage(verifier: AppStoreSubmissionVerifier(
            verifier: signed, legacy: LegacyReceiptVerification(mode: .verifyReceipt, receiptVerifier: receipts)))
        for kind in [SubmissionKind.signedTransaction, .serverNotification, .signedRenewalInfo] {
            #expect(!local.mayWaitOnOutside(Fixtures.ingested(kind: kind)), "\(kind)")
            #expect(!remote.mayWaitOnOutside(Fixtures.ingested(kind: kind)), "\(kind)")
        }
        #expect(!local.mayWaitOnOutside(Fixtures.ingested(kind: .appReceipt, payload: "AQID")))
        #expect(remote.mayWaitOnOutside(Fixtures.ingested(kind: .appReceipt, payload: "AQID")))
        // Without a Server API client a transactionId is rejected at once (unsupported kind).
        #expect(!remote.mayWaitOnOutside(Fixtures.ingested(kind: .transactionId, payload: "1000")))
        // A verifier that cannot tell.
        #expect(VerifyStage(verifier: Self.fake).mayWaitOnOutside(Fixtures.ingested()))
    }

    @Test func noTransactionsEndsWithAnOutcome() async throws {
        let result = try await VerifyStage(verifier: Self.fake).process(Fixtures.ingested(submissionId: "empty"),
                                                                          context: Fixtures.context())
        guard case .done(let outcome, _) = result else { Issue.record("\(result)"); return }
        #expect(outcome == .noTransactions)
    }

    @Test func transactionsWithoutIdsAreRejected() async throws {
        let verifier = ClosureSubmissionVerifier { _, _ in [Fixtures.transaction(id: "", original: "")] }
        let result = try await VerifyStage(verifier: verifier).process(Fixtures.ingested(), context: Fixtures.context())
        guard case .reject(let reason, _, _) = result else { Issue.record("\(result)"); return }
        #expect(reason == .invalidTransaction)
    }

    @Test func throughTheRunner() async throws {
        let transport = InMemoryTransport(partitions: ["receipts.verified": 4])
        let inputs = ["ok", "forged", "flaky", "network", "unsupported"]
        var produced: [String: InboundRecord] = [:]
        for id in inputs {
            let message = id == "unsupported" ? Fixtures.ingested(kind: .appReceipt, payload: "AQID", submissionId: id)
                : Fixtures.ingested(submissionId: id)
            let position = transport.produce(topic: "receipts.ingested", key: Array(message.recordKey.utf8),
                                             value: try ContractCoding.encode(message),
                                             headers: [RecordHeader(key: "traceparent", text: "00-\(id)")])
            produced[id] = transport.records(in: "receipts.ingested")[Int(position.offset)]
        }
        let runner = StageRunner(stage: VerifyStage(verifier: Self.fake),
                                 source: transport.source(group: "verify", topics: ["receipts.ingested"]),
                                 sink: transport.sink, logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "verify", topic: "receipts.ingested") == 4 })
        }

        // ok: one record per transaction, partitioned by originalTransactionId.
        let verified = transport.records(in: "receipts.verified")
        #expect(verified.count == 3)
        let byKey = Dictionary(grouping: verified) { String(decoding: $0.key!, as: UTF8.self) }
        #expect(Set(byKey.keys) == ["1001", "2001"])
        #expect(Set(byKey["1001"]!.map(\.partition)).count == 1)

        // forged (permanent) and unsupported kind: rejected with their codes.
        let rejected = try transport.records(in: "receipts.rejected").map {
            try ContractCoding.decode(ReceiptRejected.self, from: $0.value)
        }
        let reasons = Dictionary(uniqueKeysWithValues: rejected.map { ($0.submissionId!, $0.reason) })
        #expect(reasons == ["forged": "invalid-signature", "unsupported": .unsupportedKind])
        #expect(rejected.allSatisfy { $0.stage == .verify && $0.payloadSHA256 != nil && $0.userId == "user-1" })

        // flaky (transient) and network (unclassified): dead letters, byte for byte, full provenance.
        let dead = transport.records(in: "receipts.dead-letter")
        #expect(dead.count == 2)
        for record in dead {
            let id = try ContractCoding.decode(IngestedSubmission.self, from: record.value).submissionId
            let original = try #require(produced[id])
            #expect(record.key == original.key)
            #expect(record.value == original.value)
            #expect(transport.header("traceparent", of: record) == "00-\(id)")
            #expect(transport.header(RecordHeaders.originalTopic, of: record) == "receipts.ingested")
            #expect(transport.header(RecordHeaders.originalPartition, of: record) == String(original.partition))
            #expect(transport.header(RecordHeaders.originalOffset, of: record) == String(original.offset))
            #expect(transport.header(RecordHeaders.originalTimestamp, of: record) == RecordHeaders.timestamp(original.timestamp))
            #expect(transport.header(RecordHeaders.stage, of: record) == "verify")
            #expect(transport.header(RecordHeaders.attempt, of: record) == "1")
            #expect(transport.header(RecordHeaders.firstFailedAt, of: record) == "2026-11-30T06:00:00.000Z")
            #expect(transport.header(RecordHeaders.lastFailedAt, of: record) == "2026-11-30T06:00:00.000Z")
            let reason = transport.header(RecordHeaders.reason, of: record)
            let error = transport.header(RecordHeaders.error, of: record)
            if id == "flaky" {
                #expect(reason == "app-store-unavailable")
                #expect(error?.contains("503") == true)
            } else {
                #expect(reason == "unclassified-error")
                #expect(error == "connection reset")
            }
        }
    }
}
