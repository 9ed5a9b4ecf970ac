import AppStore
import FakeAppStore
import Foundation
import Kafka
import Observability
import Pipeline

/// `receiptd demo`: the whole pipeline on the embedded defaults in one process tree, checked.
///
/// The embedded broker runs in this process; ingest, verify, fulfil and owners run as child processes,
/// each its own consumer group. A generator signs transactions with a test PKI made at start-up
/// (root, intermediate and leaf shaped like Apple's, with Apple's OIDs) and trusted for the run,
/// mixed with duplicates, forgeries, malformed records and lifecycle scripts (one purchase through
/// renewals, billing trouble, refunds, upgrades, transfers, Apple's notifications). A tally reads
/// the terminal topics until every submission is accounted for and compares each verdict with what
/// the generator expected; then the owner view is read and every owner's final state compared with
/// the generator's own model; a summary is printed.
struct DemoCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the pipeline end to end on the embedded broker with generated submissions",
        usage: """
        receiptd demo [--submissions N] [--seed N] [--port N] [--workers N] [--timeout SECONDS] [--metrics-port N] [--keep]

          --submissions N   submissions to generate (default 3000)
          --seed N          generator seed (default 1)
          --port N          embedded broker bootstrap port (default 0: any free port)
          --workers N       worker processes per stage (default 1)
          --timeout S       give up when nothing progresses for S seconds (default 60)
          --metrics-port N  this process (with its fake App Store) serves /metrics on N, worker k on N+k
                            (default 9464; 0 turns them off)
          --keep            keep the temporary directory (worker logs, config, demo root certificate)
          --notifications N renewals the fake App Store pushes to `receiptd notifications` at the end, each of
                            which must renew its owner's entitlement (default 20; 0 skips the loop)

        Exits 0 when every submission was accounted for with the verdict the generator expected and
        every owner's final entitlement state (entitlements.state) is the one the generator expected.
        """)

    var submissions = 3000
    var seed: UInt64 = 1
    var port: UInt16 = 0
    var workers = 1
    var stallTimeout: Duration = .seconds(60)
    var metricsPort = WorkerConfiguration.ObservabilitySettings().port
    var keep = false
    var notifications = 20

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--submissions", "--seed", "--port", "--workers", "--timeout",
                                                                "--metrics-port", "--notifications"],
                                        flags: ["--keep"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        submissions = try parser.integer("--submissions", in: 1...200_000) ?? 3000
        seed = UInt64(try parser.integer("--seed", in: 0...Int.max) ?? 1)
        port = UInt16(try parser.integer("--port", in: 0...65535) ?? 0)
        workers = try parser.integer("--workers", in: 1...8) ?? 1
        stallTimeout = try parser.seconds("--timeout") ?? .seconds(60)
        metricsPort = try parser.integer("--metrics-port", in: 0...65535) ?? metricsPort
        keep = parser.flag("--keep")
        notifications = try parser.integer("--notifications", in: 0...1000) ?? notifications
    }

    func run() async throws -> Int32 {
        let run = try PipelineRun(port: port, partitions: 32, maxInFlight: 256, workersPerStage: workers,
                                  stallTimeout: stallTimeout, keep: keep)
        printError("receiptd demo: embedded broker at \(run.harness.broker.bootstrapServers), fake App Store at "
                   + "\(run.harness.appStore.productionBaseURL); workers' logs in \(run.harness.directory)")
        let status = ReadinessFlag(.ready("running the demo"))
        var settings = WorkerConfiguration.ObservabilitySettings()
        settings.port = metricsPort
        settings.host = "127.0.0.1"
        BuildInfo.register(in: .shared, role: "demo")
        FakeAppStoreMetrics.register(run.harness.appStore, in: .shared)
        let operations = try OperationsServer.start(settings, registry: .shared, readiness: { status.current })
        defer { operations?.stop() }
        if let operations {
            run.harness.fleet.observabilityBasePort = operations.port
            let names = StageName.allCases.flatMap { stage in (1...workers).map { "\(stage)-\($0)" } }
            printError("receiptd demo: metrics at http://127.0.0.1:\(operations.port)/metrics (this process and its fake "
                       + "App Store); " + names.enumerated().map { "\($1) :\(operations.port + $0 + 1)" }.joined(separator: ", "))
        }
        var generator = SubmissionGenerator(signer: run.harness.pki.signer, forger: run.harness.forgerPKI.signer, seed: seed,
                                            appStore: run.harness.appStore.store, limit: submissions)
        var expectations: [String: SubmissionExpectation] = [:]
        var batch: [SubmissionGenerator.Submission] = []
        for _ in 0..<submissions {
            let submission = try generator.next()
            expectations[submission.submissionId] = submission.expectation
            batch.append(submission)
        }
        let result = try await run.execute(batch, owners: generator.owners.entitlements, notifications: notifications)
        var report = DemoReport(result: result, expectations: expectations)
        for submission in batch { report.kinds[submission.kind, default: 0] += 1 }
        report.scripts = generator.scriptsStarted
        print(report.render())
        return report.passed ? 0 : 1
    }
}
