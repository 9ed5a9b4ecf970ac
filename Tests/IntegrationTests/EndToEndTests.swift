import AppStore
import Foundation
import Kafka
import Observability
import Pipeline
import Testing

/// The three stage runners, each its own consumer group, on the embedded broker: submissions in,
/// entitlement changes, rejections and outcomes out, every submission accounted for.
@Suite(.timeLimit(.minutes(3))) struct EndToEndTests {
    @Test func threeRunnersTurnSubmissionsIntoEntitlements() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let (ingest, ingestSource, ingestSink) = try broker.runner(IngestStage(), group: "e2e-ingest")
        let (verify, verifySource, verifySink) = try broker.runner(
            VerifyStage(verifier: AppStoreSubmissionVerifier(verifier: try samples.verifier())), group: "e2e-verify")
        let (fulfil, fulfilSource, fulfilSink) = try broker.runner(
            FulfilStage(catalogue: try BrokerFixture.catalogue(), ledger: InMemoryFulfilmentLedger()), group: "e2e-fulfil")

        var records: [(key: String, value: [UInt8])] = []
        var expected: [String: String] = [:]
        var genuine: [String] = []
        for i in 0..<120 {
            let jws = try samples.pki.signer.sign(payload: samples.transaction(10_000 + i))
            genuine.append(jws)
            records.append(samples.submission("ok-\(i)", user: "u\(i % 7)", payload: jws))
            expected["ok-\(i)"] = "grant"
        }
        for i in 0..<15 {  // the same transaction again, by the same owner
            records.append(samples.submission("dup-\(i)", user: "u\(i % 7)", payload: genuine[i]))
            expected["dup-\(i)"] = "duplicate-suppressed"
        }
        for i in 0..<10 {
            let forged = try samples.forger.signer.sign(payload: samples.transaction(20_000 + i))
            records.append(samples.submission("forged-\(i)", user: "u1", payload: forged))
            expected["forged-\(i)"] = "rejected:untrusted-root"
        }
        for i in 0..<5 {
            records.append(samples.submission("kind-\(i)", user: "u2", kind: "transactionId", payload: "2000000\(i)"))
            expected["kind-\(i)"] = "rejected:unsupported-kind"
        }
        records.append((key: "garbage", value: Array("{\"schema\":".utf8)))

        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.rejected, broker.topics.outcomes,
                                        broker.topics.deadLetter])
        let reports = try await broker.publish(broker.topics.submitted, records)
        let garbageOrigin = reports.last.map { "\($0.partition)/\($0.offset)" }

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ingest.run() }
            group.addTask { try await verify.run() }
            group.addTask { try await fulfil.run() }
            // Every submission has exactly one terminal record (+1 for the unparseable one).
            try await reader.wait { $0.count >= records.count }
            ingest.shutdownGracefully(); verify.shutdownGracefully(); fulfil.shutdownGracefully()
            try await group.waitForAll()
        }
        for source in [ingestSource, verifySource, fulfilSource] { await source.close() }
        for sink in [ingestSink, verifySink, fulfilSink] { await sink.close() }

        var verdicts: [String: String] = [:]
        var eventIds: Set<String> = []
        for message in reader.messages {
            let json = message.json
            switch message.topic {
            case broker.topics.entitlementsChanged:
                verdicts[json["submissionId"] as! String] = json["action"] as? String
                #expect(json["schema"] as? String == "entitlement-changed/v1")
                #expect(json["entitlement"] as? String == "coins")
                #expect(json["quantity"] as? Int == 100)
                eventIds.insert(json["eventId"] as! String)
            case broker.topics.rejected:
                if let id = json["submissionId"] as? String {
                    verdicts[id] = "rejected:" + (json["reason"] as! String)
                } else {
                    #expect(json["reason"] as? String == "invalid-json")
                    #expect("\(message.header(RecordHeaders.sourcePartition) ?? "")/\(message.header(RecordHeaders.sourceOffset) ?? "")" == garbageOrigin)
                    #expect(message.header(RecordHeaders.sourceTopic) == broker.topics.submitted)
                }
            case broker.topics.outcomes:
                verdicts[json["submissionId"] as! String] = json["outcome"] as? String
            default:
                Issue.record("unexpected dead letter: \(message.header(RecordHeaders.reason) ?? "?")")
            }
        }
        #expect(verdicts == expected)
        #expect(eventIds.count == 120)
        #expect(reader.messages.count == records.count)
        await reader.close()
    }
}
