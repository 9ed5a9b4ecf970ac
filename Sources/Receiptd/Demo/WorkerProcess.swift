import Foundation

/// A `receiptd` child process (a stage worker) started by the demo, bench or chaos harness.
/// Spawned once per worker at start-up, never per message.
final class WorkerProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched from the harness task that owns this worker.
    let name: String
    let arguments: [String]
    let logPath: String
    private var process: Process?

    init(name: String, arguments: [String], logPath: String) {
        self.name = name
        self.arguments = arguments
        self.logPath = logPath
    }

    /// The running binary: workers run exactly the code of the harness that started them.
    static var executablePath: String {
        if let override = ProcessInfo.processInfo.environment["RECEIPTD_BINARY"], !override.isEmpty { return override }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Starts (or restarts) the worker, appending its output to ``logPath``.
    func start() throws {
        if !FileManager.default.fileExists(atPath: logPath) {
            FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executablePath)
        process.arguments = arguments
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        var environment = ProcessInfo.processInfo.environment
        environment[ParentWatch.environmentKey] = String(getpid())  // the worker stops if this process dies
        process.environment = environment
        try process.run()
        self.process = process
    }

    var isRunning: Bool { process?.isRunning ?? false }
    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Sends `signal` (SIGTERM for a graceful stop, SIGKILL for a crash).
    func send(_ signal: Int32) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to exit, up to `timeout`; kills it after that.
    ///
    /// Reaps the child itself with `waitpid` rather than relying on Foundation noticing the exit:
    /// after a SIGKILL Foundation's reaping was seen to leave a zombie and `isRunning` true.
    /// - Returns: the exit status, or nil if it was killed by a signal or had to be killed.
    @discardableResult
    func waitForExit(timeout: Duration) async -> Int32? {
        guard let process else { return nil }
        let pid = process.processIdentifier
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return Self.exitCode(status) }
            if reaped == -1 {
                // Already reaped (by Foundation): its own bookkeeping has the answer.
                if !process.isRunning, process.terminationReason == .exit { return process.terminationStatus }
                return nil
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        return nil
    }

    /// The exit code in a `waitpid` status, or nil when the process died of a signal.
    private static func exitCode(_ status: Int32) -> Int32? {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil
    }
}
