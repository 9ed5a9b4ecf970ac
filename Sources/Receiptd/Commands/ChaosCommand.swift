import AppStore
import FakeAppStore
import Foundation
import Kafka
import Observability
import Pipeline

/// `receiptd chaos`: the pipeline under failure, with a ledger at the end that accounts for
/// every submission.
///
/// It starts the embedded broker, the fake App Store with faults (21005, 5xx, 429 with
/// `Retry-After`, latency, dropped and held connections), several worker processes per stage with
/// short retry tiers, and publishes a stream of submissions (genuine, duplicate, forged,
/// malformed, notifications, transaction ids, receipts, lifecycle scripts), paced by lag so the embedded broker's
/// retention never drops an unconsumed record. Meanwhile it kills random workers with SIGKILL and
/// restarts them, and takes the broker down and injects request errors. When the faults stop it
/// replays the dead letters, waits, reads the owner view, and prints the ledger: it exits non-zero
/// on any lost submission, any event emitted twice, any purchase granted twice to one owner, any
/// verdict inconsistent with its purchase, any owner whose final entitlement state differs from
/// the generator's model, or any partition whose retention passed a group's committed offset (a
/// broker drop must never be mistaken for, or hide, a pipeline loss).
struct ChaosCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Run the pipeline under worker kills, broker and App Store faults, and account for every submission",
        usage: """
        receiptd chaos [--submissions N] [--kills N] [--seed N] [--workers N] [--max-lag N] [--broker-down SECONDS]
                       [--appstore-outage SECONDS] [--timeout SECONDS] [--kafka-debug CONTEXTS] [--keep]

          --submissions N   submissions to publish (default 100000)
          --kills N         SIGKILLs of random workers, spread over the run (default 8)
          --seed N          seed for the mix, the kills and the faults (default 1)
          --workers N       worker processes per stage (default 2)
          --max-lag N       publish only while fewer than N submissions are unaccounted (default 4000)
          --broker-down S   how long broker 1 stays down a third of the way in (default 2); longer
                            than the group session (6 s) makes every group lose its partitions
          --appstore-outage S
                            how long every App Store answer is a 5xx halfway through (default 10);
                            longer than the retry tiers (1+2+4 s), so some submissions dead-letter
                            and are replayed at the end; 0 turns it off
          --timeout S       give up when nothing progresses for S seconds (default 90)
          --kafka-debug C   librdkafka debug contexts for every worker (e.g. cgrp,fetch); the workers'
                            logs (kept with --keep) then carry librdkafka's own trace
          --keep            keep the run directory (worker logs, configuration, fake App Store PKI)
        """)

    var submissions = 100_000
    var kills = 8
    var seed: UInt64 = 1
    var workers = 2
    var maxLag = 4000
    var stallTimeout: Duration = .seconds(90)
    var brokerDown: Duration = .seconds(2)
    var appStoreOutage: Duration = .seconds(10)
    var kafkaDebug: String?
    var keep = false

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--submissions", "--kills", "--seed", "--workers", "--max-lag", "--timeout",
                                                              "--broker-down", "--appstore-outage", "--kafka-debug"],
                                        flags: ["--keep"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        submissions = try parser.integer("--submissions", in: 1...1_000_000) ?? 100_000
        kills = try parser.integer("--kills", in: 0...1000) ?? 8
        seed = UInt64(try parser.integer("--seed", in: 0...Int.max) ?? 1)
        workers = try parser.integer("--workers", in: 1...8) ?? 2
        maxLag = try parser.integer("--max-lag", in: 100...1_000_000) ?? 4000
        stallTimeout = try parser.seconds("--timeout") ?? .seconds(90)
        brokerDown = try parser.seconds("--broker-down") ?? .seconds(2)
        appStoreOutage = try parser.seconds("--appstore-outage") ?? .seconds(10)
        kafkaDebug = parser.option("--kafka-debug")
        keep = parser.flag("--keep")
    }

    func run() async throws -> Int32 {
        routeKafkaLogs(to: Logger(label: "receiptd.chaos", level: .error))
        let harness = try PipelineHarness(port: 0, partitions: 32, maxInFlight: 256, bundleId: SubmissionGenerator.bundleId) {
            $0.retry.tierDelaysSeconds = [1, 2, 4]
            $0.kafka.sessionTimeoutSeconds = 6
            $0.kafka.commitIntervalSeconds = 1
            if let kafkaDebug {
                $0.kafka.properties["debug"] = kafkaDebug
                $0.log.level = "debug"
            }
        }
        defer {
            KafkaLogging.bootstrap { _ in }
            harness.close(keep: keep)
        }
        var faults = FakeAppStoreFaults()
        faults.latency = .milliseconds(2)
        faults.jitter = .milliseconds(3)
        faults.status21005Rate = 0.02
        faults.serverErrorRate = 0.02
        faults.rateLimitRate = 0.01
        faults.retryAfterDelay = .seconds(1)
        faults.dropRate = 0.01
        try harness.appStore.setFaults(faults)
        printError("receiptd chaos: broker \(harness.broker.bootstrapServers), fake App Store \(harness.appStore.productionBaseURL), "
                   + "logs in \(harness.directory)")

        var workerList: [WorkerProcess] = []
        for stage in StageName.receiptStages { workerList += try harness.startWorkers(stage, count: workers) }
        let tally = try harness.makeTally()
        let tallyTask = Task { await tally.run() }
        defer { tallyTask.cancel() }
        let producer = try harness.makeProducer()
        var publisher = SubmissionPublisher(producer: producer, topic: harness.configuration.topics.submitted, tally: tally)
        var generator = SubmissionGenerator(signer: harness.pki.signer, forger: harness.forgerPKI.signer, seed: seed,
                                            appStore: harness.appStore.store, limit: submissions)
        var random = SeededRandom(seed: seed &+ 0x5EED)
        var ledger = ChaosLedger()
        let killEvery = submissions / (kills + 1)
        // Warm-up: every group joined and every worker processing before faults start.
        let warmup = try (0..<50).map { _ in try generator.nextGenuine() }
        try await publisher.submit(warmup)
        await waitForQuiet(tally, &publisher, total: warmup.count, finalOnly: false)
        let baseline = tally.accountedCount
        let maxLag = min(self.maxLag, max(200, submissions / 10))
        let started = ContinuousClock.now

        var generated = 0
        var outageEnds: ContinuousClock.Instant?
        while generated < submissions {
            // A worker that died on its own (not one of our kills, which restart at once) fails the
            // run now: waiting on would only turn it into a stall.
            if harness.hasExitedWorker {
                printError("  chaos: \(harness.exitedWorkers.joined(separator: ", ")) exited on its own; see its log in \(harness.directory)")
                break
            }
            // Pace by lag: the embedded broker keeps only ~5 MiB per partition.
            var lastProgress = ContinuousClock.now
            var lastAccounted = tally.accountedCount
            while publisher.published - tally.accountedCount >= maxLag {
                try await Task.sleep(for: .milliseconds(100))
                let accounted = tally.accountedCount
                if accounted != lastAccounted { lastAccounted = accounted; lastProgress = .now }
                if ContinuousClock.now - lastProgress > stallTimeout { break }
            }
            let batch = try (0..<min(500, submissions - generated)).map { _ in try generator.next() }
            for submission in batch { ledger.expectations[submission.submissionId] = submission.expectation }
            try await publisher.submit(batch)
            try await publisher.releaseSettled()
            let before = generated
            generated += batch.count

            if kills > 0, killEvery > 0, before / killEvery != generated / killEvery, ledger.kills < kills {
                let victim = workerList[Int.random(in: 0..<workerList.count, using: &random)]
                victim.send(SIGKILL)
                _ = await victim.waitForExit(timeout: .seconds(5))
                ledger.kills += 1
                printError("  chaos: SIGKILL \(victim.name) (kill \(ledger.kills)/\(kills)); restarting")
                try victim.start()
            }
            if before < submissions / 3, generated >= submissions / 3 {
                printError("  chaos: broker 1 down for \(brokerDown)")
                harness.broker.cluster.setBrokerDown(1)
                try await Task.sleep(for: brokerDown)
                harness.broker.cluster.setBrokerUp(1)
                ledger.brokerFaults += 1
            }
            if before < submissions / 2, generated >= submissions / 2, appStoreOutage > .zero {
                // Not a sleep: publishing and kills go on while Apple is "down", so retries pile up in
                // the tiers and the oldest run out of them into the dead-letter topic.
                printError("  chaos: App Store answers 5xx for \(appStoreOutage)")
                var outage = FakeAppStoreFaults()
                outage.latency = faults.latency
                outage.serverErrorRate = 1
                try harness.appStore.setFaults(outage)
                outageEnds = .now + appStoreOutage
                ledger.appStoreOutages += 1
            }
            if let ends = outageEnds, ContinuousClock.now >= ends {
                try harness.appStore.setFaults(faults)
                outageEnds = nil
                printError("  chaos: App Store back")
            }
            if before < 2 * submissions / 3, generated >= 2 * submissions / 3 {
                printError("  chaos: injecting Produce and Fetch request errors")
                harness.broker.cluster.pushRequestErrors(apiKey: KafkaMockCluster.ApiKey.produce, errors: [6, 6, 6, 7, 7])
                harness.broker.cluster.pushRequestErrors(apiKey: KafkaMockCluster.ApiKey.fetch, errors: [6, 6, 6])
                ledger.brokerFaults += 1
            }
            printError(String(format: "  generated %d, published %d (%d waiting for an earlier step), accounted %d", generated,
                              publisher.published - warmup.count, publisher.waiting, tally.accountedCount - baseline))
        }

        // Faults stop: wait for the pipeline, replay what was dead-lettered, wait again; then
        // anything still waiting for an earlier step goes anyway, and the owner view is checked.
        try harness.appStore.setFaults(.none)
        if !harness.hasExitedWorker {
            await waitForQuiet(tally, &publisher, total: submissions + baseline, finalOnly: false)
            ledger.replay = try await replayDeadLetters(harness)
            printError("  chaos: replayed \(ledger.replay?.replayed ?? 0) dead letters")
            await waitForQuiet(tally, &publisher, total: submissions + baseline, finalOnly: true)
            if publisher.waiting > 0 {
                printError("  chaos: \(publisher.waiting) submissions still waiting for an earlier step's verdict; sending them")
                try await publisher.releaseAll()
                await waitForQuiet(tally, &publisher, total: submissions + baseline, finalOnly: true)
            }
        }
        ledger.elapsed = ContinuousClock.now - started
        if !harness.hasExitedWorker {
            printError("  chaos: checking the owner view")
            ledger.owners = await harness.ownerStateCheck(stallTimeout: stallTimeout).run(expected: generator.owners.entitlements)
        }

        ledger.retentionViolations = await retentionViolations(harness)
        ledger.counts = tally.snapshot
        ledger.lostTrace = await LostSubmissionTrace(harness: harness).run(Set(ledger.lostIds.prefix(5)))
        ledger.appStore = harness.appStore.statistics
        ledger.exitedOnTheirOwn = harness.exitedWorkers
        for worker in workerList { worker.send(SIGTERM) }
        for worker in workerList { _ = await worker.waitForExit(timeout: .seconds(30)) }
        ledger.backpressure = workerList.compactMap(BackpressureReport.init(worker:))
        await producer.close()
        await tally.close()
        print(ledger.render(submissions: submissions + baseline))
        return ledger.passed(submissions: submissions + baseline) ? 0 : 1
    }

    /// Waits until every submission has a verdict (a final one when `finalOnly`), or nothing moves;
    /// meanwhile sends the submissions whose earlier step got its verdict.
    private func waitForQuiet(_ tally: OutcomeTally, _ publisher: inout SubmissionPublisher, total: Int, finalOnly: Bool) async {
        var last = -1
        var lastChange = ContinuousClock.now
        while true {
            let released = (try? await publisher.releaseSettled()) ?? 0
            let done = finalOnly ? tally.finalCount : tally.accountedCount
            if done >= total, publisher.waiting == 0 { return }
            if done != last || released > 0 { last = done; lastChange = .now }
            if ContinuousClock.now - lastChange > stallTimeout { return }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    private func replayDeadLetters(_ harness: PipelineHarness) async throws -> ReplaySummary {
        let topics = harness.configuration.pipelineTopics
        let reader = KafkaDeadLetterReader(bootstrapServers: [harness.broker.bootstrapServers], topic: topics.deadLetter,
                                           idleTimeout: .seconds(10))
        let sink = try KafkaRecordSink(configuration: harness.configuration.kafka.producer(
            bootstrapServers: [harness.broker.bootstrapServers], role: "replay"))
        defer { Task { await sink.close() } }
        let options = DeadLetterReplayer.Options(allowedTopics: Set(StageName.allCases.map { topics.input(of: $0) }))
        return try await DeadLetterReplayer(reader: reader, sink: sink).run(options)
    }

    /// Partitions whose first retained offset passed the consuming group's committed offset, and
    /// state topic partitions that lost their beginning.
    private func retentionViolations(_ harness: PipelineHarness) async -> [String] {
        let configuration = harness.configuration
        guard let admin = try? KafkaAdminClient(bootstrapServers: [harness.broker.bootstrapServers]) else { return ["no admin client"] }
        var violations: [String] = []
        for stage in StageName.receiptStages {
            let group = configuration.groupId(for: stage)
            guard let committed = try? await admin.committedOffsets(group: group, partitions: configuration.inputPartitions(of: stage)) else {
                violations.append("\(group): committed offsets unavailable")
                continue
            }
            for position in committed {
                guard let marks = try? await admin.watermarks(topic: position.topicPartition.topic,
                                                              partition: position.topicPartition.partition) else { continue }
                let consumedUpTo = position.offset >= 0 ? position.offset : 0
                if marks.low > consumedUpTo {
                    violations.append("\(position.topicPartition): log start \(marks.low) > committed \(consumedUpTo)")
                }
            }
        }
        // The state stores rebuild from their output topics' first offset: the mock dropping any of
        // it (it keeps only ~5 MiB per partition) would make a rebuild forget state.
        let topics = configuration.pipelineTopics
        for topic in [topics.entitlementsChanged, topics.entitlementState] {
            for partition in 0..<Int32(configuration.topics.partitions) {
                guard let marks = try? await admin.watermarks(topic: topic, partition: partition) else { continue }
                if marks.low > 0 { violations.append("\(topic)-\(partition): log start \(marks.low) > 0 on a state topic") }
            }
        }
        // A consumer whose position fell behind the log start (the mock dropped records it had not
        // read yet) resets to the earliest offset and says so: the committed offsets above cannot
        // show it any more, the worker's log does.
        for worker in harness.workers {
            guard let log = try? String(contentsOfFile: worker.logPath, encoding: .utf8) else { continue }
            for line in log.split(separator: "\n") where line.contains("Offset out of range") && line.contains("offset reset") {
                violations.append("\(worker.name): " + String(line.prefix(300)))
            }
        }
        return violations
    }
}
