import Foundation
import Testing

/// A worker started by a harness must not outlive it: with `RECEIPTD_PARENT_PID` set, a worker
/// whose parent died shuts itself down gracefully (no orphans consuming from a vanished broker).
@Suite(.timeLimit(.minutes(2))) struct ParentWatchTests {
    @Test func workerStopsWhenItsParentDies() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashRestartTests.binary), "build receiptd first")
        let broker = try BrokerFixture()
        let bootstrap = try broker.cluster.listen(bootstrapPort: 0)
        let workspace = try CrashRestartTests.Workspace(bootstrap: bootstrap, commitIntervalSeconds: 1, maxInFlight: 16,
                                                            logLevel: "info")
        defer { workspace.remove() }

        // The "harness" is a shell that starts the worker in the background and exits.
        let pid = try Self.orphan(["fulfil", "--config", workspace.config], log: workspace.log)

        // Orphaned, the worker notices within about a second and exits through its graceful path.
        let deadline = ContinuousClock.now + .seconds(60)
        while Self.isAlive(pid), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        let alive = Self.isAlive(pid)
        if alive { kill(pid, SIGKILL) }
        #expect(!alive, "worker \(pid) outlived its parent: \(workspace.logTail)")
        #expect(workspace.logTail.contains("parent process gone"), "\(workspace.logTail)")
        #expect(workspace.logTail.contains("stage runner stopped"), "a graceful stop: \(workspace.logTail)")
    }

    /// `receiptd dev` (as the integration tests start it) stops with its harness too, and takes its
    /// workers down with it.
    @Test func devStopsWhenItsParentDies() async throws {
        try await Self.expectStopsWithItsParent(["dev", "--port", "0"], within: .seconds(90))
    }

    /// `receiptd fake-appstore` (which tests start as a process too) stops with its harness.
    @Test func fakeAppStoreStopsWhenItsParentDies() async throws {
        try await Self.expectStopsWithItsParent(["fake-appstore", "--port", "0"], within: .seconds(30))
    }

    /// Orphans `receiptd arguments` (``orphan(_:log:)``) and expects it to notice and exit by itself
    /// within `timeout`, saying why in its log.
    static func expectStopsWithItsParent(_ arguments: [String], within timeout: Duration) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashRestartTests.binary), "build receiptd first")
        let directory = try scratchDirectory("parent-\(arguments[0])")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("process.log").path
        let pid = try orphan(arguments, log: log)

        let deadline = ContinuousClock.now + timeout
        while isAlive(pid), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        let alive = isAlive(pid)
        if alive { kill(pid, SIGKILL) }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!alive, "receiptd \(arguments[0]) \(pid) outlived its parent: \(text.suffix(2000))")
        #expect(text.contains("parent process gone"), "\(text.suffix(2000))")
    }

    /// Starts `receiptd arguments` from a shell that exits a second later, as a harness killed with
    /// SIGKILL would leave it, with `RECEIPTD_PARENT_PID` set to the shell. Output goes to `log`;
    /// the pid comes back through a file, not a pipe, which the orphan would hold open.
    static func orphan(_ arguments: [String], log: String) throws -> Int32 {
        let pidFile = log + ".pid"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "RECEIPTD_OBSERVABILITY_PORT=0 RECEIPTD_PARENT_PID=$$ \"$0\" \"$@\" >>\"$LOG\" 2>&1 </dev/null & echo $! >\"$PIDFILE\"; sleep 1",
                           CrashRestartTests.binary] + arguments
        shell.environment = ProcessInfo.processInfo.environment.merging(["LOG": log, "PIDFILE": pidFile]) { _, new in new }
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        // Polled rather than waited for: a wait on the shell can last as long as the orphan, which
        // inherits what Foundation opened for it (so a regression would hang instead of failing).
        let deadline = ContinuousClock.now + .seconds(30)
        var printed = ""
        while ContinuousClock.now < deadline {
            printed = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
            if printed.hasSuffix("\n") { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try #require(Int32(printed.trimmingCharacters(in: .whitespacesAndNewlines)), "no pid: \(printed)")
    }

    /// Whether `pid` exists and is not a zombie (an orphan's zombie may wait for a reaper).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }
}
