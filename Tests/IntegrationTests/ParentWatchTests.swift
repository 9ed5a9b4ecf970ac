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

        // The "harness" is a shell that starts the worker in the background, prints its pid and
        // exits at once, as a harness killed with SIGKILL would leave it.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "RECEIPTD_OBSERVABILITY_PORT=0 RECEIPTD_PARENT_PID=$$ \"$0\" fulfil --config \"$1\" >>\"$2\" 2>&1 & echo $!; sleep 1",
                           CrashRestartTests.binary, workspace.config, workspace.log]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        let pid = try #require(Int32(printed.trimmingCharacters(in: .whitespacesAndNewlines)), "no worker pid: \(printed)")

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

    /// Whether `pid` exists and is not a zombie (an orphan's zombie may wait for a reaper).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }
}
