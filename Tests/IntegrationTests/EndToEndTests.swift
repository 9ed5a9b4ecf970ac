import AppStore
import Foundation
import Kafka
import Observability
import Pipeline
import Testing

/// The stage runners, each its own consumer group, on the embedded broker: submissions in,
/// entitlement changes, rejections and outcomes out, every submission accounted for; fulfil's
/// owner updates folded by the owner view into each user's entitlement state.
@Suite(.timeLimit(.minutes(3))) struct EndToEndTests {
    @Test func runnersTurnSubmissionsIntoEntitlementsAndOwnerStates() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let ingest = try broker.runner(IngestStage(), group: "e2e-ingest")
        let verify = try broker.runner(
            VerifyStage(verifier: AppStoreSubmissionVerifier(verifier: try samples.verifier())), group: "e2e-verify")
        let fulfil = try broker.runner(
            FulfilStage(catalogue: try BrokerFixture.catalogue(), ledger: KeyedStateStore()), group: "e2e-fulfil")
        let owners = try broker.ownersRunner(group: "e2e-owners")

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

        let verdictTopics = [broker.topics.entitlementsChanged, broker.topics.rejected, broker.topics.outcomes,
                             broker.topics.deadLetter]
        let reader = try broker.reader(verdictTopics + [broker.topics.ownerUpdates, broker.topics.entitlementState])
        let verdicts = { reader.messages.filter { verdictTopics.contains($0.topic) } }
        let reports = try await broker.publish(broker.topics.submitted, records)
        let garbageOrigin = reports.last.map { "\($0.partition)/\($0.offset)" }

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ingest.run() }
            group.addTask { try await verify.run() }
            group.addTask { try await fulfil.run() }
            group.addTask { try await owners.run() }
            // Every submission has exactly one terminal record (+1 for the unparseable one), and
            // every granted purchase reached its owner's state.
            try await reader.wait { _ in verdicts().count >= records.count }
            try await reader.wait { $0.filter { $0.topic == broker.topics.entitlementState }.count >= genuine.count }
            ingest.shutdownGracefully(); verify.shutdownGracefully(); fulfil.shutdownGracefully(); owners.shutdownGracefully()
            try await group.waitForAll()
        }

        var outcomes: [String: String] = [:]
        var eventIds: Set<String> = []
        var unitsByUser: [String: Int] = [:]
        var ownerUpdates = 0
        for message in reader.messages {
            let json = message.json
            switch message.topic {
            case broker.topics.entitlementsChanged:
                outcomes[json["submissionId"] as! String] = json["action"] as? String
                #expect(json["schema"] as? String == "entitlement-changed/v2")
                #expect(json["change"] as? String == "purchase" && json["status"] as? String == "active")
                #expect(json["entitlement"] as? String == "coins")
                #expect(json["quantity"] as? Int == 100)
                eventIds.insert(json["eventId"] as! String)
            case broker.topics.ownerUpdates:
                ownerUpdates += 1
                #expect(json["schema"] as? String == "owner-purchase/v1")
                #expect(message.key.map { String(decoding: $0, as: UTF8.self) }
                    == "\(Samples.bundleId)/\(json["userId"] as? String ?? "?")/coins")
            case broker.topics.entitlementState:
                #expect(json["schema"] as? String == "entitlement-state/v1")
                // States of one key arrive in order: the last one read is the latest.
                unitsByUser[json["userId"] as! String] = json["units"] as? Int
            case broker.topics.rejected:
                if let id = json["submissionId"] as? String {
                    outcomes[id] = "rejected:" + (json["reason"] as! String)
                } else {
                    #expect(json["reason"] as? String == "invalid-json")
                    #expect("\(message.header(RecordHeaders.sourcePartition) ?? "")/\(message.header(RecordHeaders.sourceOffset) ?? "")" == garbageOrigin)
                    #expect(message.header(RecordHeaders.sourceTopic) == broker.topics.submitted)
                }
            case broker.topics.outcomes:
                outcomes[json["submissionId"] as! String] = json["outcome"] as? String
            default:
                Issue.record("unexpected dead letter: \(message.header(RecordHeaders.reason) ?? "?")")
            }
        }
        #expect(outcomes == expected)
        #expect(eventIds.count == genuine.count)
        #expect(verdicts().count == records.count)
        #expect(ownerUpdates == genuine.count)
        // 120 purchases of 100 coins over users u0...u6: u0 bought 18 times, the others 17.
        #expect(unitsByUser == Dictionary(uniqueKeysWithValues: (0..<7).map { ("u\($0)", $0 == 0 ? 1800 : 1700) }))
        await reader.close()
    }
}
