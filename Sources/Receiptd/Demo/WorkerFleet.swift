import Foundation
import Pipeline

/// The stage workers a harness runs as child processes of itself, and the temporary directory
/// they share: the one configuration file every worker reads and one log file per worker.
///
/// `receiptd dev` and, through ``PipelineHarness``, `demo`, `bench pipeline` and `chaos` start and
/// stop their workers here, so every harness stops them the same way.
final class WorkerFleet: @unchecked Sendable {
    // @unchecked: mutated only by the command that owns the fleet, from one task.
    let directory: String
    /// The configuration file every worker is started with (see ``writeConfiguration(_:)``).
    let configPath: String
    /// The workers' environment; ``WorkerProcess`` adds the parent pid.
    var environment = ProcessInfo.processInfo.environment
    /// Worker `n` (1-based, in start order) serves `/metrics` on this port + `n`; 0 (the default)
    /// turns the workers' endpoints off, so harnesses never collide on a port unless asked.
    var observabilityBasePort = 0
    private(set) var workers: [WorkerProcess] = []

    /// Creates a fresh temporary directory named `<prefix>-XXXXXX`.
    /// - Parameter configName: the file name of the workers' configuration in it.
    init(prefix: String, configName: String) throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-XXXXXX").path
        var buffer = Array(template.utf8CString)
        guard mkdtemp(&buffer) != nil else { throw ValidationError("cannot create a temporary directory") }
        directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        configPath = directory + "/" + configName
    }

    /// Writes the workers' configuration to ``configPath``. Relative paths in it (the defaults',
    /// such as `Config/catalogue.json`) mean the current directory here, but a worker reads them
    /// relative to the file, which lives in a temporary directory: they are written absolute.
    func writeConfiguration(_ configuration: WorkerConfiguration) throws {
        let tree = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(configuration)) as? [String: Any] ?? [:]
        let here = FileManager.default.currentDirectoryPath + "/receiptd.json"
        let resolved = ConfigLoader.resolvingPaths(in: tree, relativeTo: here)
        try JSONSerialization.data(withJSONObject: resolved, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            .write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts `count` worker processes of `stage` (`receiptd <stage> --config <configPath>`),
    /// named `<stage>-<n>`, each logging to `<directory>/<stage>-<n>.log`.
    /// ``WorkerProcess/observabilityPort`` says where each serves its metrics (0: nowhere).
    @discardableResult
    func start(_ stage: StageName, count: Int) throws -> [WorkerProcess] {
        var started: [WorkerProcess] = []
        for index in 0..<count {
            let name = "\(stage)-\(index + 1)"
            let port = observabilityBasePort == 0 ? 0 : observabilityBasePort + workers.count + 1
            let worker = WorkerProcess(name: name, arguments: [stage.rawValue, "--config", configPath,
                                                               "--observability-port", String(port)],
                                       logPath: "\(directory)/\(name).log", environment: environment,
                                       observabilityPort: port)
            try worker.start()
            workers.append(worker)
            started.append(worker)
        }
        return started
    }

    /// SIGTERM to every worker, then waits for them (killing stragglers after `timeout`).
    /// - Returns: how many exited with status 0.
    func stop(timeout: Duration) async -> Int {
        for worker in workers { worker.send(SIGTERM) }
        var clean = 0
        for worker in workers where await worker.waitForExit(timeout: timeout) == 0 { clean += 1 }
        return clean
    }

    /// Removes the directory, logs and configuration included.
    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
