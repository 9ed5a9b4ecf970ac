import Foundation

/// A `receiptd` child process (a stage worker) started by the demo, bench, chaos or dev harness.
/// Spawned once per worker at start-up, never per message.
final class WorkerProcess: @unchecked Sendable {
    // @unchecked: `process` and `ended` are only touched from the harness task that owns this worker.
    let name: String
    let arguments: [String]
    let logPath: String
    /// The worker's environment (``ParentWatch/environmentKey`` is added at start).
    let environment: [String: String]
    /// Where the worker serves `/metrics`, `/healthz` and `/readyz` (0: not served).
    let observabilityPort: Int
    private var process: Process?
    /// How the current process ended, once this object has seen it end.
    private var ended: WorkerExit?

    init(name: String, arguments: [String], logPath: String,
         environment: [String: String] = ProcessInfo.processInfo.environment, observabilityPort: Int = 0) {
        self.name = name
        self.observabilityPort = observabilityPort
        self.arguments = arguments
        self.logPath = logPath
        self.environment = environment
    }

    /// The running binary: workers run exactly the code of the harness that started them.
    static var executablePath: String {
        if let override = ProcessInfo.processInfo.environment["RECEIPTD_BINARY"], !override.isEmpty { return override }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Starts (or restarts) the worker, appending its output to ``logPath``.
    func start() throws {
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executablePath)
        process.arguments = arguments
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        var environment = self.environment
        environment[ParentWatch.environmentKey] = String(getpid())  // the worker stops if this process dies
        process.environment = environment
        try process.run()
        self.process = process
        ended = nil
    }

    var isRunning: Bool { process?.isRunning ?? false }
    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Sends `signal` (SIGTERM for a graceful stop, SIGKILL for a crash).
    func send(_ signal: Int32) {
        guard let process, process.isRunning, ended == nil else { return }
        kill(process.processIdentifier, signal)
    }

    /// How the worker ended, reaping it if it just did; nil while it runs (or was never started).
    ///
    /// Reaps the child itself with `waitpid` rather than relying on Foundation noticing the exit:
    /// after a SIGKILL Foundation's reaping was seen to leave a zombie and `isRunning` true.
    func exitIfEnded() -> WorkerExit? {
        if let ended { return ended }
        guard let process else { return nil }
        let pid = process.processIdentifier
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            ended = (status & 0x7F) == 0 ? .status((status >> 8) & 0xFF) : .signal(status & 0x7F)
        } else if reaped == -1, !process.isRunning {
            // Already reaped by Foundation: its own bookkeeping has the answer.
            ended = process.terminationReason == .exit ? .status(process.terminationStatus) : .signal(process.terminationStatus)
        }
        return ended
    }

    /// The last non-empty line of the worker's log, at most 300 characters: where a worker that
    /// cannot start says why (a configuration error, a broker it cannot reach).
    var lastLogLine: String? {
        guard let handle = FileHandle(forReadingAtPath: logPath) else { return nil }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 4096 ? size - 4096 : 0)
        let tail = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard let line = tail.split(whereSeparator: \.isNewline).last(where: { !$0.allSatisfy(\.isWhitespace) }) else { return nil }
        return line.count > 300 ? String(line.prefix(300)) + "..." : String(line)
    }

    /// Waits for the process to exit, up to `timeout`; kills it after that.
    /// - Returns: the exit status, or nil if it was killed by a signal or had to be killed.
    @discardableResult
    func waitForExit(timeout: Duration) async -> Int32? {
        guard let process else { return nil }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let ended = exitIfEnded() { return ended.status }
            try? await Task.sleep(for: .milliseconds(50))
        }
        kill(process.processIdentifier, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(process.processIdentifier, &status, 0)
        ended = .signal(SIGKILL)
        return nil
    }
}

/// How a ``WorkerProcess`` ended.
enum WorkerExit: Equatable, Sendable, CustomStringConvertible {
    case status(Int32)
    case signal(Int32)

    /// The exit status, or nil when the process died of a signal.
    var status: Int32? {
        if case .status(let code) = self { return code }
        return nil
    }

    var description: String {
        switch self {
        case .status(let code): "exit status \(code)"
        case .signal(let number): "signal \(number)"
        }
    }
}
