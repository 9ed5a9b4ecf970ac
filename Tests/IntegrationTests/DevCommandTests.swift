import Foundation
import Kafka
import Pipeline
import Testing

/// `receiptd dev` as a process: the embedded broker and one worker per stage, configured by an
/// overlay. The overlay is the only way the test PKI's root reaches the verify worker, so an
/// entitlement for a transaction signed with it proves the overlay reached the workers; SIGINT
/// then stops everything with status 0 and leaves no worker behind.
@Suite(.timeLimit(.minutes(3))) struct DevCommandTests {
    static let partitions = 4

    @Test func overlayReachesWorkersAndSigintStopsEverything() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashRestartTests.binary), "build receiptd first")
        let directory = try scratchDirectory("receiptd-dev-test")
        defer { try? FileManager.default.removeItem(at: directory) }
        let samples = try Samples()
        let root = directory.appendingPathComponent("root.pem").path
        try samples.pki.root.pemString.write(toFile: root, atomically: true, encoding: .utf8)
        let catalogue = BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path
        let rig = try DevRig(overlay: """
        {"verify": {"trustRoots": ["\(root)"], "bundleIds": ["\(Samples.bundleId)"]},
         "topics": {"partitions": \(Self.partitions)}, "fulfil": {"catalogue": "\(catalogue)"}}
        """, in: directory)
        try await rig.start()
        let bootstrap = rig.bootstrap
        #expect(rig.readyLine == "ready bootstrap=\(bootstrap)" && bootstrap.contains(":"))
        let workers = Self.children(of: rig.process.processIdentifier)
        #expect(workers.count == StageName.receiptStages.count, "one worker per stage: \(workers)")

        let topics = Topics()
        let reader = try TopicReader(bootstrap: [bootstrap], topics: [topics.entitlementsChanged, topics.rejected],
                                     partitions: Self.partitions)
        let jws = try samples.pki.signer.sign(payload: samples.transaction(70_001))
        let submission = samples.submission("dev-1", user: "player-1", payload: jws)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [bootstrap]))
        _ = try await producer.sendAll([KafkaProducerMessage(topic: topics.submitted, key: Array(submission.key.utf8),
                                                             value: submission.value)])
        await producer.close()
        let isVerdict: (KafkaConsumerMessage) -> Bool = { $0.json["submissionId"] as? String == "dev-1" }
        try await reader.wait(timeout: .seconds(60)) { messages in messages.contains(where: isVerdict) }
        let verdict = try #require(reader.messages.first(where: isVerdict))
        #expect(verdict.topic == topics.entitlementsChanged, "\(verdict.json)")
        #expect(verdict.json["schema"] as? String == "entitlement-changed/v2")
        #expect(verdict.json["transactionId"] as? String == "70001")
        await reader.close()

        let stopped = try #require(await rig.stop(), "receiptd dev did not stop after SIGINT: \(rig.diagnostics)")
        #expect(stopped.normal && stopped.status == 0, "\(rig.diagnostics)")
        for pid in workers { #expect(!ParentWatchTests.isAlive(pid), "worker \(pid) outlived receiptd dev") }
    }

    /// The result of `operation`, or nil if it takes longer than `timeout` (it is then cancelled).
    static func within<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await operation() }
            group.addTask { try? await Task.sleep(for: timeout); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The first line written to `handle`, or nil if it ends (or the wait is cancelled) first.
    static func firstLine(of handle: FileHandle) async -> String? {
        await PrometheusToolsTests.line(startingWith: "", in: handle)
    }

    /// The pids whose parent is `pid` (from `/proc`).
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }
}
