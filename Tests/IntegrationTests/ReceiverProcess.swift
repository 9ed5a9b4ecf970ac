import Foundation
import Testing

/// `receiptd notifications` as a process on a port of its choosing; ready once it prints
/// `ready url=…`. Stopped with SIGTERM (or SIGKILL when dropped).
final class ReceiverProcess: @unchecked Sendable {
    // @unchecked: used from one test task.
    let process = Process()
    private(set) var url = ""
    private let stderrPath: String

    /// - Parameters:
    ///   - brokers: the bootstrap servers.
    ///   - overlay: a JSON configuration overlay.
    ///   - directory: where the overlay and standard error go.
    init(brokers: String, overlay: String, in directory: URL) throws {
        let config = directory.appendingPathComponent("notifications-\(UUID().uuidString.prefix(8)).json").path
        try overlay.write(toFile: config, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: CrashRestartTests.binary)
        process.arguments = ["notifications", "--brokers", brokers, "--port", "0", "--config", config]
        // RECEIPTD_PARENT_PID: a receiver whose test run dies stops with it.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RECEIPTD_") }
            .merging(["RECEIPTD_PARENT_PID": String(getpid())]) { _, new in new }
        stderrPath = config + ".err"
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
    }

    var diagnostics: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func start() async throws {
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = await DevCommandTests.within(.seconds(60)) { await DevCommandTests.firstLine(of: output.fileHandleForReading) }
        let ready = try #require(line ?? nil, "no ready line: \(diagnostics)")
        url = try #require(ready.hasPrefix("ready url=") ? String(ready.dropFirst("ready url=".count)) : nil, "\(ready)")
    }

    /// SIGTERM, then waits for the exit.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
