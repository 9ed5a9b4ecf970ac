import Foundation
import Kafka
import Lifecycle
import Observability
import Pipeline

/// `receiptd dev`: the embedded broker and one worker process per stage, for local development.
///
/// Every case of ``StageName`` gets a worker, so a new stage is run without touching this file.
/// All workers read one file: the standard configuration with the `--config` overlays, pointed at
/// the broker, written once so that what they run is what this command resolved (the `RECEIPTD_*`
/// variables are in it, and are not passed on to override it). Readiness is read from the workers'
/// own logs (``RunnerLogMessage/partitionsAssigned``): the mock cluster cannot describe a consumer
/// group to another process. Foundation starts each child in its own process group, so a
/// terminal's Ctrl-C reaches this process only and each worker gets exactly one SIGTERM from it.
struct DevCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run the embedded broker and one worker per stage for local development",
        usage: """
        receiptd dev [--config FILE]... [--port N] [--keep]

          --config FILE   configuration overlay for every worker (repeatable; later files override earlier ones)
          --port N        stable bootstrap port of the embedded broker (default 9092; 0 picks a free one)
          --keep          keep the temporary directory (the workers' logs and configuration)

        Prints `ready bootstrap=HOST:PORT` on standard output once every stage's worker has its
        partitions; progress goes to standard error. With observability.port P (default 9464; 0 turns
        it off) this process serves /metrics, /healthz and /readyz on P and the workers on P+1, P+2, ...
        in the order ingest, verify, fulfil, owners; the URLs are printed on standard error. Runs until SIGINT/SIGTERM, then stops the
        workers gracefully and exits 0. If a worker exits on its own, says which and how, stops
        the others and exits 1.
        """)

    var configFiles: [String] = []
    var port: UInt16 = 9092
    var keep = false

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--config", "--port"], flags: ["--keep"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        configFiles = parser.options("--config")
        if let p = try parser.integer("--port", in: 0...65535) { port = UInt16(p) }
        keep = parser.flag("--keep")
    }

    func run() async throws -> Int32 {
        var configuration = try ConfigLoader.standard(files: configFiles).load()
        if let level = Logger.Level(name: configuration.log.level), level > .notice {
            printError("receiptd dev: workers log at notice rather than \(level): readiness is read from a notice line")
            configuration.log.level = "notice"
        }
        let logger = makeLogger(configuration, label: "receiptd.dev")  // the broker's librdkafka lines, on standard error
        // Installed before any worker starts, so an early Ctrl-C is a graceful stop too.
        let shutdown = GracefulShutdownTrigger()
        let signals = UnixSignal.stream([.sigint, .sigterm])
        let signalWatch = Task { for await _ in signals { shutdown.trigger() } }
        defer { signalWatch.cancel() }
        // Started by a harness (a test) that dies: stop with it instead of running on as an orphan.
        let parentWatch = ParentWatch.startIfRequested(logger: logger, shutDown: { shutdown.trigger() })
        defer { parentWatch?.cancel() }

        let status = ReadinessFlag(.notReady("starting the embedded broker"))
        BuildInfo.register(in: .shared, role: "dev")
        let operations = try OperationsServer.start(configuration.observability, registry: .shared,
                                                    readiness: { status.current })
        defer { operations?.stop() }
        let broker = try EmbeddedBroker(brokerCount: 1, port: port, configuration: configuration)
        let fleet = try WorkerFleet(prefix: "receiptd-dev", configName: "receiptd.dev.json")
        fleet.environment = ConfigLoader.withoutConfigurationVariables(fleet.environment)
        fleet.observabilityBasePort = operations?.port ?? 0
        var died: (worker: WorkerProcess, exit: WorkerExit)?
        do {
            var workers = broker.workerConfiguration(configuration)
            // A restarted worker otherwise waits out its previous self's 45 s session before the
            // group rebalances; on one laptop 10 s is plenty (an overlay's own value is kept).
            if workers.kafka.sessionTimeoutSeconds == WorkerConfiguration.Kafka().sessionTimeoutSeconds {
                workers.kafka.sessionTimeoutSeconds = 10
            }
            try fleet.writeConfiguration(workers)
            for stage in StageName.receiptStages { try fleet.start(stage, count: 1) }
            printError("receiptd dev: embedded broker at \(broker.bootstrapServers); workers' logs in \(fleet.directory)")
            if let operations {
                printError("receiptd dev: metrics at http://127.0.0.1:\(operations.port)/metrics (this process), "
                           + fleet.workers.map { "\($0.name) http://127.0.0.1:\($0.observabilityPort)/metrics" }
                               .joined(separator: ", "))
            }
            died = await supervise(fleet, bootstrap: broker.bootstrapServers, shutdown: shutdown, status: status)
        } catch {
            await close(fleet, broker, grace: configuration.runner.shutdownGraceSeconds)
            throw error
        }
        if let died {
            printError("receiptd dev: worker \(died.worker.name) exited unexpectedly (\(died.exit)); stopping the others")
            var log = LogFollower(path: died.worker.logPath)
            for line in log.newLines().suffix(10) { printError("  " + line) }
        } else {
            printError("receiptd dev: stopping the workers")
        }
        await close(fleet, broker, grace: configuration.runner.shutdownGraceSeconds)
        return died == nil ? 0 : 1
    }

    /// Follows the workers until shutdown is requested or one of them exits; prints the ready line
    /// once every worker has logged its partition assignment.
    /// - Returns: the worker that exited on its own and how, or nil when shutdown was requested.
    private func supervise(_ fleet: WorkerFleet, bootstrap: String, shutdown: GracefulShutdownTrigger,
                           status: ReadinessFlag) async -> (worker: WorkerProcess, exit: WorkerExit)? {
        var pending = fleet.workers.map { (name: $0.name, log: LogFollower(path: $0.logPath)) }
        var lastNote = ContinuousClock.now
        while !shutdown.isTriggered {
            for worker in fleet.workers {
                if let exit = worker.exitIfEnded() {
                    status.set(.notReady("worker \(worker.name) exited (\(exit))"))
                    return (worker, exit)
                }
            }
            if !pending.isEmpty {
                for index in pending.indices.reversed() {
                    let lines = pending[index].log.newLines()
                    guard lines.contains(where: { LogFollower.isRecord($0, message: RunnerLogMessage.partitionsAssigned) }) else { continue }
                    printError("receiptd dev: \(pending[index].name) has its partitions")
                    pending.remove(at: index)
                }
                status.set(pending.isEmpty ? .ready("every worker has its partitions")
                           : .notReady("waiting for partitions: \(pending.map(\.name).joined(separator: ", "))"))
                if pending.isEmpty {
                    print("ready bootstrap=\(bootstrap)")
                    fflush(nil)
                } else if ContinuousClock.now - lastNote > .seconds(15) {
                    printError("receiptd dev: waiting for partitions: \(pending.map(\.name).joined(separator: ", "))")
                    lastNote = .now
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Stops the workers (SIGTERM, then SIGKILL after their grace period and 10 s), closes the
    /// broker and removes the directory unless `--keep`.
    private func close(_ fleet: WorkerFleet, _ broker: EmbeddedBroker, grace: Double) async {
        let clean = await fleet.stop(timeout: .seconds(grace + 10))
        printError("receiptd dev: \(clean) of \(fleet.workers.count) workers stopped cleanly")
        KafkaLogging.bootstrap { _ in }  // the closing broker's goodbyes are expected
        broker.cluster.close()
        if keep { printError("receiptd dev: kept \(fleet.directory)") } else { fleet.remove() }
    }
}
