import Foundation
import Kafka
import Pipeline
import Testing

/// A `receiptd fulfil` worker process killed with SIGKILL mid-stream and restarted loses nothing,
/// and what it re-emits carries the same event ids.
@Suite(.timeLimit(.minutes(3))) struct CrashRestartTests {
    static var binary: String {
        ProcessInfo.processInfo.environment["RECEIPTD_BINARY"]
            ?? BrokerFixture.repository.appendingPathComponent(".build/debug/receiptd").path
    }

    func startWorker(config: String, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["fulfil", "--config", config]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    @Test func killedWorkerRestartsWithoutLosingOrChangingEvents() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary), "build receiptd first: \(Self.binary)")
        let broker = try BrokerFixture()
        let bootstrap = try broker.cluster.listen(bootstrapPort: 0)
        let samples = try Samples()
        let total = 4000
        try await broker.publish(broker.topics.verified, (0..<total).map { try samples.verified(500_000 + $0) })

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("fulfil.json").path
        let log = directory.appendingPathComponent("fulfil.log").path
        FileManager.default.createFile(atPath: log, contents: nil)
        let json = """
        {"kafka": {"bootstrapServers": "\(bootstrap)", "commitIntervalSeconds": 0.3, "sessionTimeoutSeconds": 6},
         "topics": {"partitions": \(BrokerFixture.partitions), "create": false},
         "runner": {"maxInFlight": 8},
         "fulfil": {"catalogue": "\(BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path)"},
         "log": {"level": "warning"}}
        """
        try json.write(toFile: config, atomically: true, encoding: .utf8)
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter])

        let first = try startWorker(config: config, log: log)
        do {
            try await reader.wait(timeout: .seconds(60)) { $0.count >= 800 }
        } catch {
            let tail = (try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(3000)) } ?? ""
            Issue.record("worker made no progress; its log ends with:\n\(tail)")
            first.terminate()
            throw error
        }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        let seenAtKill = reader.messages.count
        #expect(seenAtKill < total, "the worker finished before it could be killed")

        let second = try startWorker(config: config, log: log)
        try await reader.wait(timeout: .seconds(90)) { messages in
            Set(messages.compactMap { $0.json["transactionId"] as? String }).count >= total
        }
        second.terminate()  // SIGTERM: graceful
        second.waitUntilExit()
        #expect(second.terminationStatus == 0, "graceful shutdown should exit 0; log: \(log)")

        var idsByTransaction: [String: Set<String>] = [:]
        for message in reader.messages(in: broker.topics.entitlementsChanged) {
            let json = message.json
            idsByTransaction[json["transactionId"] as! String, default: []].insert(json["eventId"] as! String)
        }
        #expect(idsByTransaction.count == total, "lost transactions")
        #expect(idsByTransaction.values.allSatisfy { $0.count == 1 }, "a re-emitted event changed its id")
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        await reader.close()
    }
}
