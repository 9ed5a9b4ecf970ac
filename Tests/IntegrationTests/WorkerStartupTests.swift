import Foundation
import Testing

/// What a worker says and does when it cannot start normally (issue 10's usability faults): it
/// names what it waits for, gives up after `kafka.startupTimeoutSeconds`, stops with exit 0 on
/// SIGTERM while waiting, prints the usage text only for argument mistakes, and, once running,
/// logs a progress line.
@Suite(.timeLimit(.minutes(2))) struct WorkerStartupTests {
    /// A worker process with its output in a file, and its exit as an event.
    final class Worker: @unchecked Sendable {
        // @unchecked: used from one test task.
        let process = Process()
        let output: String
        let exits: AsyncStream<Int32>

        init(_ arguments: [String], environment: [String: String] = [:], directory: URL) throws {
            output = directory.appendingPathComponent("worker-\(UUID().uuidString).log").path
            FileManager.default.createFile(atPath: output, contents: nil)
            process.executableURL = URL(fileURLWithPath: CrashRestartTests.binary)
            process.arguments = arguments
            process.currentDirectoryURL = directory
            process.environment = ProcessInfo.processInfo.environment.merging(
                ["RECEIPTD_OBSERVABILITY_PORT": "0", "RECEIPTD_PARENT_PID": String(getpid())].merging(environment) { _, new in new }
            ) { _, new in new }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardOutput = handle
            process.standardError = handle
            let (exits, exited) = AsyncStream<Int32>.makeStream()
            self.exits = exits
            process.terminationHandler = { exited.yield($0.terminationReason == .exit ? $0.terminationStatus : -$0.terminationStatus); exited.finish() }
            try process.run()
        }

        var text: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

        /// The exit status (negative: killed by that signal), or nil after `timeout`.
        func exit(within timeout: Duration) async -> Int32? {
            let exits = self.exits
            return await DevCommandTests.within(timeout) { await exits.first { _ in true } } ?? nil
        }

        /// Waits until the output contains `text`.
        func waitFor(_ text: String, timeout: Duration) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if self.text.contains(text) { return true }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return false
        }

        deinit { if process.isRunning { process.terminate() } }
    }

    @Test func anUnreachableBrokerIsNamedThenGivenUpOn() async throws {
        let directory = try scratchDirectory("receiptd-startup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let worker = try Worker(["ingest", "--brokers", "127.0.0.1:1"],
                                environment: ["RECEIPTD_KAFKA_STARTUP_TIMEOUT_SECONDS": "3"], directory: directory)
        let status = await worker.exit(within: .seconds(60))
        #expect(status == 1, "\(worker.text)")
        #expect(worker.text.contains("error: gave up waiting for the brokers at 127.0.0.1:1 (topic checks) after 3 s (kafka.startupTimeoutSeconds)"))
        #expect(!worker.text.contains("USAGE"), "not a usage error")
    }

    @Test func sigtermWhileWaitingForTheBrokerExitsZero() async throws {
        let directory = try scratchDirectory("receiptd-startup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let worker = try Worker(["fulfil", "--brokers", "127.0.0.1:1", "--config",
                                 BrokerFixture.repository.appendingPathComponent("Config/receiptd.json").path],
                                directory: directory)
        // librdkafka's first refused connection: the worker is now waiting for the broker.
        // A minute: a process starting on a machine loaded by the parallel suite took over 30 s.
        #expect(await worker.waitFor("Connection refused", timeout: .seconds(60)), "\(worker.text)")
        worker.process.terminate()
        let status = await worker.exit(within: .seconds(30))
        #expect(status == 0, "\(worker.text)")
        #expect(worker.text.contains("shutdown requested while waiting for the brokers at 127.0.0.1:1"))
    }

    @Test func aRunningWorkerLogsItsProgress() async throws {
        let directory = try scratchDirectory("receiptd-startup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalogue = BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path
        let rig = try DevRig(overlay: #"{"topics": {"partitions": 2}, "fulfil": {"catalogue": "\#(catalogue)"}, "log": {"progressIntervalSeconds": 1}}"#,
                             in: directory)
        try await rig.start()
        try Kcat(bootstrap: rig.bootstrap).produce("receipts.submitted", [(key: "b/u", value: Array("not json".utf8))])
        let logs = try #require(rig.diagnostics.split(separator: "\n").first { $0.contains("workers' logs in ") }
            .map { String($0.split(separator: " ").last!) + "/ingest-1.log" })
        let deadline = ContinuousClock.now + .seconds(30)
        var line: Substring?
        while line == nil, ContinuousClock.now < deadline {
            line = ((try? String(contentsOfFile: logs, encoding: .utf8)) ?? "").split(separator: "\n")
                .first { $0.contains(#""msg":"progress""#) && $0.contains(#""records.rejected":1"#) }
            if line == nil { try await Task.sleep(for: .milliseconds(200)) }
        }
        let progress = try #require(line, "no progress line counting the rejection")
        for key in ["records.in", "records.out", "kafka.lag", "records.per_second", "stage.name"] {
            #expect(progress.contains("\"\(key)\""), "\(progress)")
        }
        _ = await rig.stop()
    }

    @Test func configNamesItsSourcesAndPrintsPathsAsPaths() async throws {
        let directory = try scratchDirectory("receiptd-startup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = BrokerFixture.repository.appendingPathComponent("Config/receiptd.json").path
        let printed = try Worker(["config", "--config", file], environment: ["RECEIPTD_LOG_LEVEL": "debug"], directory: directory)
        #expect(await printed.exit(within: .seconds(30)) == 0)
        #expect(printed.text.contains("receiptd config: built-in defaults, then \(file), then RECEIPTD_LOG_LEVEL"), "\(printed.text)")
        let catalogue = BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path
        #expect(printed.text.contains("\"catalogue\" : \"\(catalogue)\""), "\(printed.text)")
        #expect(!printed.text.contains("\\/"))
    }

    @Test func onlyArgumentMistakesPrintTheUsage() async throws {
        let directory = try scratchDirectory("receiptd-startup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let mistake = try Worker(["fulfil", "--no-such-option"], directory: directory)
        #expect(await mistake.exit(within: .seconds(30)) == 64)
        #expect(mistake.text.contains("USAGE: receiptd fulfil"), "\(mistake.text)")
        // Run from a directory without Config/: the built-in catalogue path does not resolve.
        let missing = try Worker(["fulfil", "--brokers", "127.0.0.1:1"], directory: directory)
        #expect(await missing.exit(within: .seconds(30)) == 1)
        #expect(missing.text.contains("cannot load the product catalogue fulfil.catalogue Config/catalogue.json (relative to the working directory"),
                "\(missing.text)")
        #expect(!missing.text.contains("USAGE"), "\(missing.text)")
    }
}
