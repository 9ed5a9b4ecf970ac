import AppStore
import Foundation
import HTTP
import Observability
import Pipeline

/// `receiptd bench verify|pipeline`: throughput measurements (not tests). Each prints its figure
/// as the last line, `name=value`, so scripts and the README can quote it.
struct BenchCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure JWS verification or end-to-end pipeline throughput",
        usage: """
        receiptd bench verify [--count N] [--rounds N] [--batch N]
        receiptd bench appstore [--submissions N] [--max-in-flight N] [--latency-ms N] [--rounds N]
        receiptd bench stages [--count N] [--only STAGE [--rounds N]]
        receiptd bench pipeline [--submissions N] [--workers N] [--max-in-flight N] [--metrics-port N]
        receiptd bench budget [--submissions N] [--workers N] [--budget N] [--window-seconds S]

          verify     single-core JWS verifications per second: a corpus of N fresh JWS (default 20000)
                     signed by one test chain, as in production where one Apple leaf signs everything;
                     the best of --rounds passes (default 3). Last line: verify_jws_per_second=<n>.
                     --batch N verifies them N at a time with their ES256 checks run together (a
                     SignatureBatch, as the verify stage does a round of up to 64) instead of one at a time
          appstore   verify-stage throughput for transactionId submissions against the fake App Store,
                     with 0 ms and with --latency-ms (default 250) added to every answer. Both runs use the
                     same --submissions (default 40000: at ~3,000/s the first and last 250 ms, when the
                     pipeline fills and drains, stay a few percent of a run) and --max-in-flight (default
                     4096: a 250 ms answer needs rate x 0.25 s records waiting on the network, ~800 here,
                     and enough more queued that both cores always find work; with 2048 they were ~80%
                     busy at 250 ms). Needs 2 file descriptors per request in flight (client and server
                     ends); the soft limit is raised as far as the hard one allows. Each run also reports
                     its process CPU time per submission, which a busy machine distorts less than the
                     rate; --rounds N (default 1) runs N pairs back to back and reports the median pair.
                     Lines: appstore_cpu_cost_ratio=<CPU per submission at 0 ms / at latency>, then last
                     appstore_latency_ratio=<throughput at latency / throughput at 0 ms>
          stages     the four stages through the generic runner on the in-memory transport (no Kafka),
                     then verify again over the same JWS (the verified-JWS cache): what our own plumbing
                     costs next to verification, in rate, CPU and page faults per record, after a stage that does nothing
                     ("runner (pass-through)": what the runner and the transport alone cost per record; then
                     the same for a stage that only computes, whose records run in batches). A
                     pass over an eighth of the submissions runs first; exit 1 if a stage's CPU per record grows
                     more than 3x with 8x the records (a cost that grows with the state, as fulfil's once did).
                     Lines: stages_receipts_per_second=<n>, last stages_verify_resubmitted_per_second=<n>.
                     --only ingest|verify|fulfil|owners|resubmitted|runner runs the stages before that one
                     once, then that one --rounds times (default 5), each pass over all records on a fresh
                     consumer group (verify with a fresh verified-JWS cache, so every JWS is verified; fulfil
                     and owners with a fresh ledger). Last line: stage_cpu_us_per_record=<median>.
                     scripts/bench-side-by-side runs it for two builds at the same time, one core each.
          pipeline   receipts per second end to end through ingest, verify, fulfil and owners worker
                     processes on the embedded broker (default 20000 genuine submissions after a warm-up),
                     with each worker's CPU and page faults per receipt and peak RSS and how busy the cores were.
                     --max-in-flight N records in flight per worker (default 4096: records wait for their
                     outputs' acknowledgement in batches, and the embedded broker's producers keep one request
                     in flight; with 1024 the cores sat 40% idle waiting on them, 2048 gave 3,332/s, 4096 3,725).
                     --metrics-port N has worker k serve /metrics on N+k and scrapes every worker once a
                     second during the run (default 0: not served; metrics are recorded either way).
                     Lines: pipeline_worker_cpu_us_per_receipt=<n>, pipeline_cores_busy_percent=<n>,
                     pipeline_worker_peak_rss_mb=<n>, last pipeline_receipts_per_second=<n>
          budget     a verify group of --workers (default 3) on the embedded broker sharing one Get Transaction
                     Info budget of --budget requests (default 20) per --window-seconds (default 2) by partitions,
                     against the fake App Store counting arrivals per sliding window (default 300 submissions).
                     Exit 1 if the peak exceeds the budget. Last line: budget_peak_requests_per_window=<n>
        """)

    enum Mode { case verify, appstore, pipeline, stages, budget }
    var mode: Mode
    var count: Int
    var rounds: Int
    var workers: Int
    var maxInFlight: Int
    var latency: Duration
    var metricsPort = 0
    /// `bench verify --batch`: JWS verified together (1: one at a time).
    var batch = 1
    var budget = AppStoreBudget(requests: 20, windowSeconds: 2)
    /// `bench stages --only`: the one stage to measure, pass after pass.
    var only: OneStage?

    init(arguments: [String]) throws {
        guard let first = arguments.first else { throw ValidationError("missing benchmark name: verify or pipeline") }
        let parser = try ArgumentParser(Array(arguments.dropFirst()), options: ["--count", "--rounds", "--submissions", "--workers",
                                                                                  "--max-in-flight", "--latency-ms",
                                                                                  "--metrics-port", "--budget", "--window-seconds",
                                                                                  "--only", "--batch"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        switch first {
        case "verify": mode = .verify
        case "pipeline": mode = .pipeline
        case "appstore": mode = .appstore
        case "stages": mode = .stages
        case "budget": mode = .budget
        default: throw ValidationError("unknown benchmark '\(first)': verify, appstore or pipeline")
        }
        // `bench stages` takes either name (its documented commands say --count).
        let countOption = mode == .verify || (mode == .stages && parser.option("--count") != nil) ? "--count" : "--submissions"
        count = try parser.integer(countOption, in: 100...1_000_000) ?? 20_000
        rounds = try parser.integer("--rounds", in: 1...20) ?? 3
        workers = try parser.integer("--workers", in: 1...8) ?? 1
        maxInFlight = try parser.integer("--max-in-flight", in: 1...10_000) ?? ([.appstore, .pipeline].contains(mode) ? 4096 : 256)
        latency = .milliseconds(try parser.integer("--latency-ms", in: 0...10_000) ?? 250)
        metricsPort = try parser.integer("--metrics-port", in: 0...65_000) ?? 0
        if let batch = try parser.integer("--batch", in: 1...4096) {
            guard mode == .verify else { throw ValidationError("--batch is for bench verify") }
            self.batch = batch
        }
        if mode == .appstore, parser.option("--submissions") == nil { count = 40_000 }
        if mode == .appstore, parser.option("--rounds") == nil { rounds = 1 }
        if let name = parser.option("--only") {
            guard mode == .stages else { throw ValidationError("--only is for bench stages") }
            guard let stage = OneStage(rawValue: name) else {
                throw ValidationError("--only \(name): one of " + OneStage.allCases.map(\.rawValue).joined(separator: ", "))
            }
            only = stage
            if parser.option("--rounds") == nil { rounds = 5 }
        }
        if mode == .budget {
            if parser.option("--submissions") == nil { count = 300 }
            if parser.option("--workers") == nil { workers = 3 }
            budget.requests = try parser.integer("--budget", in: 1...100_000) ?? budget.requests
            budget.windowSeconds = Double(try parser.integer("--window-seconds", in: 1...3600) ?? 2)
        }
    }

    func run() async throws -> Int32 {
        switch mode {
        case .verify: return try benchVerify()
        case .pipeline: return try await benchPipeline()
        case .appstore: return try await benchAppStore()
        case .stages:
            if let only { return try await benchOneStage(only) }
            return try await benchStages()
        case .budget: return try await benchBudget()
        }
    }

    private func benchBudget() async throws -> Int32 {
        let measured = try await VerifyBudgetBenchmark(submissions: count, workers: workers, budget: budget).run()
        print("budget_workers=\(workers) partitions_per_worker=\(measured.partitions.map(String.init).joined(separator: ","))")
        print("budget_requests_per_window=\(budget.requests) window_seconds=\(Int(budget.windowSeconds)) submissions=\(count)")
        print(String(format: "budget_elapsed_seconds=%.1f", measured.seconds))
        print("budget_peak_requests_per_window=\(measured.peak)")
        return measured.peak <= budget.requests ? 0 : 1
    }

    private func benchStages() async throws -> Int32 {
        // A smaller pass first: a stage whose cost per record grows with the records it has seen (as
        // fulfil's did when its state store copied a partition's dictionary on every update) shows
        // it as a ratio, whatever the machine's speed.
        let small = max(count / 8, 100)
        guard let baseline = try await measureStages(count: small, report: false) else { return 1 }
        guard let full = try await measureStages(count: count, report: true) else { return 1 }
        var grew: [String] = []
        for (name, cpu) in full.cpuPerRecord {
            guard let before = baseline.cpuPerRecord.first(where: { $0.name == name })?.microseconds, before > 0 else { continue }
            let ratio = cpu / before
            printError(String(format: "%@: %.1f µs CPU per record at %d records, %.1f at %d: ratio %.2f", name, before, small,
                              cpu, count, ratio))
            if ratio > Self.scalingLimit { grew.append(name) }
        }
        print("stages_receipts_per_second=\(Int(Double(count) / full.seconds.reduce(0, +)))")
        print("stages_verify_resubmitted_per_second=\(Int(Double(count) / full.resubmittedSeconds))")
        guard grew.isEmpty else {
            printError("bench stages: CPU per record grew more than \(Self.scalingLimit)x with 8x the records in: "
                       + grew.joined(separator: ", "))
            return 1
        }
        return 0
    }

    /// How much a stage's CPU per record may grow from an eighth of the records to all of them
    /// (measured ratios stay near 1; the old fulfil state store's copy made it about 8).
    static let scalingLimit = 3.0

    private struct StagesMeasurement {
        var seconds: [Double] = []
        var cpuPerRecord: [(name: String, microseconds: Double)] = []
        var resubmittedSeconds = 0.0
    }

    /// Runs the four stages (and verify again over the same JWS) over `count` fresh submissions on
    /// the in-memory transport. - Returns: nil (after saying why) when the outputs are not complete.
    private func measureStages(count: Int, report: Bool) async throws -> StagesMeasurement? {
        let bench = try StagesBench(count: count)
        let verifier = try bench.verifier()
        var measurement = StagesMeasurement()
        func stage<S: Stage>(_ stage: S, label: String = "\(S.name)", on other: InMemoryTransport? = nil) async throws -> Double {
            let pass = try await bench.pass(stage, group: label, on: other)
            measurement.cpuPerRecord.append((label, pass.cpuMicrosecondsPerRecord))
            if report { printError(bench.line(label, pass)) }
            return pass.seconds
        }
        _ = try await stage(PassThroughStage(), label: "runner (pass-through)", on: bench.plumbing)
        _ = try await stage(ComputeOnlyPassThroughStage(), label: "runner (pass-through, batched)", on: bench.plumbing)
        // Between passes, what no later pass reads is deleted (StagesBench.deleteRecords).
        let topics = bench.topics
        bench.deleteRecords(except: [], on: bench.plumbing)
        measurement.seconds.append(try await stage(IngestStage()))
        bench.deleteRecords(except: [topics.ingested])
        measurement.seconds.append(try await stage(VerifyStage(verifier: verifier)))
        measurement.seconds.append(try await stage(FulfilStage(catalogue: bench.catalogue,
                                                               ledger: KeyedStateStore(inMemoryCapacity: count + 1))))
        bench.deleteRecords(except: [topics.ingested, topics.entitlementsChanged, topics.ownerUpdates])
        measurement.seconds.append(try await stage(OwnersStage(store: KeyedStateStore(inMemoryCapacity: count + 1))))
        bench.deleteRecords(except: [topics.ingested, topics.entitlementsChanged])
        let entitlements = bench.transport.recordCount(in: bench.topics.entitlementsChanged)
        guard entitlements == count else {
            printError("bench stages: \(entitlements) entitlements for \(count) submissions")
            return nil
        }
        // The same ingested records again, as apps re-send their jwsRepresentation on every launch:
        // the verified-JWS cache answers each one.
        let hitsBefore = verifier.signedData.verifiedCacheStatistics.hits
        measurement.resubmittedSeconds = try await stage(VerifyStage(verifier: verifier), label: "verify (re-submitted JWS)")
        guard verifier.signedData.verifiedCacheStatistics.hits - hitsBefore == count else {
            printError("bench stages: the re-submitted pass missed the verified-JWS cache")
            return nil
        }
        return measurement
    }

    private func benchAppStore() async throws -> Int32 {
        let benchmark = AppStoreVerifyBenchmark(submissions: count, maxInFlight: maxInFlight)
        // Pairs run back to back, so load from other processes that comes and goes lands on both
        // halves of a pair alike; the median pair is reported.
        var pairs: [(base: AppStoreVerifyBenchmark.Measurement, slow: AppStoreVerifyBenchmark.Measurement)] = []
        for _ in 1...rounds {
            let base = try await benchmark.run(latency: .zero)
            printError(String(format: "%d transactionId submissions, %d in flight, 0 ms: %.0f/s, %.2f ms CPU per submission",
                              count, maxInFlight, base.perSecond, base.cpuMillisecondsPerSubmission))
            let slow = try await benchmark.run(latency: latency)
            printError(String(format: "%d transactionId submissions, %d in flight, %@: %.0f/s, %.2f ms CPU per submission, ratio %.2f",
                              count, maxInFlight, "\(latency)", slow.perSecond, slow.cpuMillisecondsPerSubmission,
                              slow.perSecond / base.perSecond))
            pairs.append((base, slow))
        }
        let median = pairs.sorted { $0.slow.perSecond / $0.base.perSecond < $1.slow.perSecond / $1.base.perSecond }[pairs.count / 2]
        print("appstore_verify_per_second_0ms=\(Int(median.base.perSecond))")
        print("appstore_verify_per_second_latency=\(Int(median.slow.perSecond))")
        // About what the rate ratio becomes when both runs keep every core busy (an otherwise idle
        // machine), less the fill and drain at the ends of the latency run.
        print(String(format: "appstore_cpu_cost_ratio=%.2f",
                     median.base.cpuMillisecondsPerSubmission / median.slow.cpuMillisecondsPerSubmission))
        print(String(format: "appstore_latency_ratio=%.2f", median.slow.perSecond / median.base.perSecond))
        return 0
    }

    private func benchVerify() throws -> Int32 {
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400 * 30))
        var random = SeededRandom(seed: 42)
        var corpus: [String] = []
        corpus.reserveCapacity(count)
        for i in 0..<count {
            let id = String(2_000_000_000_000_000 + Int64(i) * 7 + Int64.random(in: 0..<7, using: &random))
            let transaction = SampleTransaction(
                transactionId: id, originalTransactionId: id, bundleId: "com.demo.game", productId: "com.demo.monthly.sub",
                type: "Auto-Renewable Subscription", purchaseDate: now.addingTimeInterval(-3600),
                expiresDate: now.addingTimeInterval(86_400 * 30), signedDate: now)
            corpus.append(try pki.signer.sign(payload: transaction.payload()))
        }
        var configuration = SignedDataVerifierConfiguration(trustAnchors: [pki.root])
        configuration.environment = .any
        // Every round re-verifies the same corpus: with the verified-JWS cache it would measure lookups.
        configuration.limits.verifiedCacheCapacity = 0
        let verifier = try SignedDataVerifier(configuration: configuration)
        // Warm-up: fills the chain cache, as the first message from Apple's leaf does in production.
        guard case .valid = verifier.verifyAndDecodeTransaction(corpus[0]) else {
            printError("bench verify: the generated JWS did not verify")
            return 1
        }
        var best = 0.0
        for round in 1...rounds {
            let clock = ContinuousClock()
            var valid = 0
            let elapsed = clock.measure {
                if batch == 1 {
                    for jws in corpus {
                        if case .valid = verifier.verifyAndDecodeTransaction(jws) { valid += 1 }
                    }
                } else {
                    valid = Self.verifyInBatches(corpus, of: batch, with: verifier)
                }
            }
            guard valid == corpus.count else {
                printError("bench verify: only \(valid) of \(corpus.count) verified")
                return 1
            }
            let seconds = elapsed / .seconds(1)
            let rate = Double(corpus.count) / seconds
            printError(String(format: "round %d: %d JWS in %.3f s = %.0f/s (one thread%@)", round, corpus.count, seconds, rate,
                              batch == 1 ? "" : ", batches of \(batch)"))
            best = max(best, rate)
        }
        print("verify_jws_per_second=\(Int(best))")
        return 0
    }

    /// Verifies `corpus` `size` JWS at a time, as the verify stage does a round: every verification
    /// begun into one ``SignatureBatch``, its checks run, then each finished. - Returns: how many were valid.
    private static func verifyInBatches(_ corpus: [String], of size: Int, with verifier: SignedDataVerifier) -> Int {
        var valid = 0
        for start in stride(from: 0, to: corpus.count, by: size) {
            let batch = SignatureBatch(capacity: size)
            let pending = corpus[start..<min(start + size, corpus.count)].map { jws in
                jws.withUTF8InPlace { verifier.beginTransaction(utf8: $0, deferringTo: batch) }
            }
            batch.checkAll()
            for begun in pending {
                if case .valid = verifier.finish(begun, in: batch) { valid += 1 }
            }
        }
        return valid
    }

    private func benchPipeline() async throws -> Int32 {
        let run = try PipelineRun(port: 0, partitions: 32, maxInFlight: maxInFlight, workersPerStage: workers,
                                  stallTimeout: .seconds(60), keep: false)
        var generator = SubmissionGenerator(signer: run.harness.pki.signer, forger: run.harness.forgerPKI.signer, seed: 7)
        let warmup = try (0..<200).map { _ in try generator.nextGenuine() }
        let submissions = try (0..<count).map { _ in try generator.nextGenuine() }
        printError("bench pipeline: \(count) genuine submissions through \(workers) worker(s) per stage"
                   + (metricsPort == 0 ? ", metrics not served" : ", metrics served from port \(metricsPort + 1) and scraped every second"))
        run.harness.fleet.observabilityBasePort = metricsPort
        let scraper = metricsPort == 0 ? nil : Task { [metricsPort, workers] in
            let http = try CurlHTTPClient()
            let ports = (1...(StageName.allCases.count * workers)).map { metricsPort + $0 }
            while !Task.isCancelled {
                for port in ports {
                    _ = try? await http.execute(HTTPRequest(method: .get, url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(2))
                }
                try await Task.sleep(for: .seconds(1))
            }
        }
        defer { scraper?.cancel() }
        let result = try await run.execute(submissions, warmup: warmup)
        guard result.complete else {
            for worker in result.exitedWorkers { printError("bench pipeline: worker \(worker)") }
            printError("bench pipeline: only \(max(0, result.counts.accounted.count - warmup.count)) of \(count) accounted for"
                       + (result.exitedWorkers.isEmpty ? "" : "; stopped, since a worker exited on its own"))
            return 1
        }
        let seconds = result.elapsed / .seconds(1)
        printError(String(format: "%d submissions in %.2f s", count, seconds))
        if let usage = result.usage {
            for worker in usage.workers {
                let rss = worker.peakResidentBytes.map { String(format: ", peak RSS %.0f MB", Double($0) / 1e6) } ?? ""
                printError(String(format: "  %@: %.2f CPU s, %.0f µs per receipt, %.2f page faults per receipt%@", worker.name,
                                  worker.cpuSeconds, worker.cpuSeconds / Double(count) * 1e6, worker.minorFaults / Double(count), rss))
            }
            let workers = usage.workers.map(\.cpuSeconds).reduce(0, +)
            let harness = usage.harnessCPUSeconds
            printError(String(format: "  workers %.0f µs CPU per receipt; with the harness (embedded broker, generator, tally) %.0f µs;"
                              + " cores busy %.0f%% of the window", workers / Double(count) * 1e6,
                              (workers + harness) / Double(count) * 1e6, usage.machineBusyFraction * 100))
            print(String(format: "pipeline_worker_cpu_us_per_receipt=%.0f", workers / Double(count) * 1e6))
            print(String(format: "pipeline_cores_busy_percent=%.0f", usage.machineBusyFraction * 100))
            let peak = usage.workers.compactMap(\.peakResidentBytes).max() ?? 0
            print(String(format: "pipeline_worker_peak_rss_mb=%.0f", Double(peak) / 1e6))
        }
        print("pipeline_receipts_per_second=\(Int(Double(count) / seconds))")
        return 0
    }
}
