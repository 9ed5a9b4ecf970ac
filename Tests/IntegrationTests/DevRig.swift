import Foundation
import Testing

/// `receiptd dev` as a process: the embedded broker and one worker per stage, configured by an
/// overlay file; ready once it prints `ready bootstrap=HOST:PORT`.
final class DevRig: @unchecked Sendable {
    // @unchecked: used from one test task.
    let process = Process()
    let directory: URL
    let overlay: String
    private(set) var bootstrap = ""
    /// The line it printed on standard output when ready.
    private(set) var readyLine = ""
    private let stderrPath: String
    private let exits: AsyncStream<(normal: Bool, status: Int32)>

    /// Writes `overlay` (JSON) to a temporary directory and starts `receiptd dev --port 0` with it.
    /// - Parameter observabilityPort: where dev serves `/metrics` (its workers on the ports after
    ///   it); 0, the default, turns them off so parallel rigs never collide.
    init(overlay json: String, in directory: URL, observabilityPort: Int = 0) throws {
        self.directory = directory
        overlay = directory.appendingPathComponent("dev.json").path
        try json.write(toFile: overlay, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: CrashRestartTests.binary)
        process.arguments = ["dev", "--port", "0", "--config", overlay]
        // RECEIPTD_PARENT_PID: a rig whose test run dies stops with it.
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["RECEIPTD_OBSERVABILITY_PORT": String(observabilityPort), "RECEIPTD_PARENT_PID": String(getpid())]) { _, new in new }
        stderrPath = directory.appendingPathComponent("dev.err").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        let (exits, exited) = AsyncStream<(normal: Bool, status: Int32)>.makeStream()
        self.exits = exits
        process.terminationHandler = { exited.yield(($0.terminationReason == .exit, $0.terminationStatus)); exited.finish() }
    }

    /// What `receiptd dev` said on standard error (progress and failures).
    var diagnostics: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Starts it and waits for the ready line.
    func start(timeout: Duration = .seconds(90)) async throws {
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let ready = await DevCommandTests.within(timeout) { await DevCommandTests.firstLine(of: output.fileHandleForReading) }
        guard let line = ready ?? nil else {
            // Said apart from the #require, so the run's output carries why dev gave no ready line.
            let status = process.isRunning ? "still running" : "exited with status \(process.terminationStatus)"
            Issue.record("receiptd dev gave no ready line (\(status)); its standard error:\n\(diagnostics)")
            throw DevRigError.notReady
        }
        readyLine = line
        bootstrap = try #require(line.split(separator: "=", maxSplits: 1).last.map(String.init), "\(line)")
    }

    /// SIGINT, then the exit status (nil when it did not stop within `timeout`).
    func stop(timeout: Duration = .seconds(60)) async -> (normal: Bool, status: Int32)? {
        kill(process.processIdentifier, SIGINT)
        let exits = self.exits
        return await DevCommandTests.within(timeout) { await exits.first { _ in true } } ?? nil
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }  // its workers follow (ParentWatch)
    }
}

enum DevRigError: Error { case notReady }
