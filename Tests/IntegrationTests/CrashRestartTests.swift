import Foundation
import Kafka
import Pipeline
import Testing

/// `receiptd fulfil` worker processes killed with SIGKILL and restarted: nothing is lost and, with
/// the Kafka ledger (the default), nothing is emitted twice: every transaction (each a consumable
/// purchase of its own, so one change) ends as exactly one `entitlement-changed/v2` record.
@Suite(.timeLimit(.minutes(5))) struct CrashRestartTests {
    static var binary: String {
        ProcessInfo.processInfo.environment["RECEIPTD_BINARY"]
            ?? BrokerFixture.repository.appendingPathComponent(".build/debug/receiptd").path
    }

    /// Runs `receiptd arguments` from the repository to completion.
    /// - Returns: its exit status (the signal's number when a signal ended it) and standard output.
    static func runToCompletion(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let run = try runCapturingErrors(arguments)
        return (run.status, run.output)
    }

    /// As ``runToCompletion(_:)``, also keeping the last lines of standard error, for a failure
    /// message: a process that dies (an assertion in the embedded broker aborts the process hosting
    /// it) leaves no output of its own that says why. Standard error goes to a file, so a chatty
    /// run cannot fill a pipe nobody reads while standard output is read to its end.
    static func runCapturingErrors(_ arguments: [String], lines: Int = 40, environment: [String: String] = [:]) throws
        -> (status: Int32, output: String, errorTail: String) {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build receiptd first: \(binary)")
        let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-stderr-\(UUID().uuidString)").path
        try #require(FileManager.default.createFile(atPath: errorPath, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = BrokerFixture.repository
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), errorTail(errors, lines: lines))
    }

    /// The last `lines` lines of a process's standard error, with an assertion's own line ahead of
    /// them when it came earlier (a crash's backtrace fills the tail).
    static func errorTail(_ errors: String, lines: Int) -> String {
        let all = errors.split(separator: "\n", omittingEmptySubsequences: false)
        let tail = all.suffix(lines).joined(separator: "\n")
        guard let assertion = all.dropLast(lines).last(where: { $0.contains("Assertion") }) else { return tail }
        return "\(assertion)\n...\n\(tail)"
    }

    /// Starts `receiptd fulfil --config config`, appending its output to `log`.
    func startWorker(config: String, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["fulfil", "--config", config]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        var environment = ProcessInfo.processInfo.environment
        environment["RECEIPTD_PARENT_PID"] = String(getpid())  // no orphan worker if the test runner dies
        environment["RECEIPTD_OBSERVABILITY_PORT"] = "0"  // parallel tests must not collide on 9464
        process.environment = environment
        try process.run()
        return process
    }

    /// A working directory with a fulfil configuration for `bootstrap` and a shared log.
    struct Workspace {
        let directory: URL
        let config: String
        let log: String

        init(bootstrap: String, commitIntervalSeconds: Double, maxInFlight: Int, ledger: String = "kafka",
             logLevel: String = "warning") throws {
            directory = try scratchDirectory("receiptd-crash")
            config = directory.appendingPathComponent("fulfil.json").path
            log = directory.appendingPathComponent("fulfil.log").path
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let json = """
            {"kafka": {"bootstrapServers": "\(bootstrap)", "commitIntervalSeconds": \(commitIntervalSeconds),
                       "sessionTimeoutSeconds": 6, "rebalanceTimeoutSeconds": 5},
             "topics": {"partitions": \(BrokerFixture.partitions), "create": false},
             "retry": {"tierDelaysSeconds": [1, 2, 3]},
             "runner": {"maxInFlight": \(maxInFlight)},
             "fulfil": {"catalogue": "\(BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path)",
                        "ledger": "\(ledger)"},
             "log": {"level": "\(logLevel)"}}
            """
            try json.write(toFile: config, atomically: true, encoding: .utf8)
        }

        func start() throws -> Process {
            try CrashRestartTests().startWorker(config: config, log: log)
        }

        var logTail: String {
            (try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(3000)) } ?? ""
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Entitlement records per transaction id.
    static func recordsPerTransaction(_ reader: TopicReader, _ topics: Topics) -> [String: Int] {
        reader.messages(in: topics.entitlementsChanged).reduce(into: [:]) { counts, message in
            counts[message.json["transactionId"] as! String, default: 0] += 1
        }
    }

    @Test func killedWorkerRestartsWithoutLosingOrRepeatingEvents() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary), "build receiptd first: \(Self.binary)")
        let broker = try BrokerFixture()
        let bootstrap = try broker.cluster.listen(bootstrapPort: 0)
        let samples = try Samples()
        let total = 4000
        try await broker.publish(broker.topics.verified, (0..<total).map { try samples.verified(500_000 + $0) })
        let workspace = try Workspace(bootstrap: bootstrap, commitIntervalSeconds: 0.3, maxInFlight: 8)
        defer { workspace.remove() }
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter])

        let first = try workspace.start()
        do {
            try await reader.wait(timeout: .seconds(60)) { $0.count >= 800 }
        } catch {
            Issue.record("worker made no progress; its log ends with:\n\(workspace.logTail)")
            first.terminate()
            throw error
        }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        #expect(reader.messages.count < total, "the worker finished before it could be killed")

        let second = try workspace.start()
        try await reader.wait(timeout: .seconds(90)) { messages in
            Set(messages.compactMap { $0.json["transactionId"] as? String }).count >= total
        }
        second.terminate()  // SIGTERM: graceful
        second.waitUntilExit()
        #expect(second.terminationStatus == 0, "graceful shutdown should exit 0; log: \(workspace.logTail)")
        try await reader.waitUntilCaughtUp([broker.topics.entitlementsChanged])

        let counts = Self.recordsPerTransaction(reader, broker.topics)
        #expect(counts.count == total, "lost transactions")
        let repeated = counts.filter { $0.value > 1 }.count
        #expect(repeated == 0, "\(repeated) transactions were emitted more than once")
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        await reader.close()
    }

    /// Killed with SIGKILL again and again at random moments, with offsets that never get
    /// committed (a commit interval longer than any run), so every kill lands after outputs were
    /// produced and before their inputs' offsets were committed, and each restart re-reads the
    /// whole input; some kills land while the worker joins or rebuilds its ledger. Re-submissions
    /// of the same transactions are in the input too. Every transaction ends as exactly one
    /// entitlement record. (With `fulfil.ledger: memory` this test fails: hundreds of
    /// transactions are emitted several times.)
    @Test func killedAgainAndAgainEveryTransactionIsEmittedExactlyOnce() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary), "build receiptd first: \(Self.binary)")
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix(seed: seed)
        let broker = try BrokerFixture()
        let bootstrap = try broker.cluster.listen(bootstrapPort: 0)
        let samples = try Samples()
        let transactions = 4000
        var records = try (0..<transactions).map { try samples.verified(700_000 + $0) }
        let resubmitted = 400
        records += try (0..<resubmitted).map { _ in try samples.verified(700_000 + Int(random.next() % UInt64(transactions))) }
        try await broker.publish(broker.topics.verified, records)
        let workspace = try Workspace(bootstrap: bootstrap, commitIntervalSeconds: 3600, maxInFlight: 4)
        defer { workspace.remove() }
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.outcomes, broker.topics.deadLetter])
        let changes = { reader.messages(in: broker.topics.entitlementsChanged) }
        let entitled = { Set(changes().map { $0.json["transactionId"] as! String }).count }

        // Kill moments: right after the run's first new output, a random while after some
        // progress, and blind (whatever the worker is doing: joining, rebuilding, processing).
        var kills = 0
        var stoppedGracefully = false
        for round in 0..<5 {
            let worker = try workspace.start()
            let before = changes().count
            switch round % 3 {
            case 0:
                try await reader.wait(timeout: .seconds(60)) { _ in changes().count > before }
            case 1:
                try await reader.wait(timeout: .seconds(60)) { _ in changes().count > before + 100 }
                try await Task.sleep(for: .milliseconds(Int(random.next() % 400)))
            default:
                try await Task.sleep(for: .milliseconds(1000 + Int(random.next() % 4000)))
            }
            guard entitled() < transactions else {
                worker.terminate()
                worker.waitUntilExit()
                #expect(worker.terminationStatus == 0, "seed \(seed): graceful shutdown should exit 0")
                stoppedGracefully = true
                break
            }
            kill(worker.processIdentifier, SIGKILL)
            worker.waitUntilExit()
            kills += 1
        }
        #expect(kills >= 3, "seed \(seed): the worker finished before it was killed often enough")

        if !stoppedGracefully {
            // Nothing was ever committed: the last worker reads the whole input again, rebuilding
            // every ledger partition from what the killed ones emitted. Stop it after a full pass.
            let judged = { changes().count + reader.messages(in: broker.topics.outcomes).count }
            let judgedBefore = judged()
            let last = try workspace.start()
            do {
                try await reader.wait(timeout: .seconds(120)) { _ in
                    entitled() >= transactions && judged() - judgedBefore >= records.count
                }
            } catch {
                Issue.record("seed \(seed): no completion; log ends with:\n\(workspace.logTail)")
                last.terminate()
                throw error
            }
            last.terminate()
            last.waitUntilExit()
            #expect(last.terminationStatus == 0, "seed \(seed): graceful shutdown should exit 0; log: \(workspace.logTail)")
        }
        try await reader.waitUntilCaughtUp([broker.topics.entitlementsChanged, broker.topics.outcomes])

        let counts = Self.recordsPerTransaction(reader, broker.topics)
        #expect(counts.count == transactions, "seed \(seed): lost transactions")
        let repeated = counts.filter { $0.value > 1 }
        let example = repeated.first.map { "\($0.key) x\($0.value)" } ?? ""
        #expect(repeated.count == 0, "seed \(seed): \(repeated.count) transactions emitted more than once, e.g. \(example)")
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        let suppressed = reader.messages(in: broker.topics.outcomes).filter { $0.json["outcome"] as? String == "duplicate-suppressed" }
        #expect(suppressed.count >= resubmitted, "seed \(seed): re-deliveries after the kills should have been suppressed")
        print("CrashRestartTests: seed \(seed), \(kills) SIGKILLs, \(suppressed.count) duplicates suppressed, "
              + "\(counts.count) transactions emitted once each")
        await reader.close()
    }
}

/// A tiny seeded generator (SplitMix64), so a failing run can be described by its seed.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
