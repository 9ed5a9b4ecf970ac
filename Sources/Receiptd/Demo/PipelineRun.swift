import Foundation
import Kafka
import Observability
import Pipeline

/// Drives one run of the harness: start workers, publish submissions (those that wait for
/// another's verdict once it has one), watch the tally until every submission is accounted for
/// (or nothing moves for the stall timeout), check the owner view, stop workers.
struct PipelineRun {
    struct Result {
        var submitted: Int
        var counts: OutcomeTally.Counts
        var elapsed: Duration
        var complete: Bool
        var cleanWorkerExits: Int
        var workers: Int
        /// The final-owner-state check (nil when the run was given no expectations).
        var owners: OwnerStateCheck.Result?
        /// The notification loop (nil when not run).
        var loop: NotificationLoop.Result?
        /// CPU of each worker and of this process (broker, generator, tally) over the measured
        /// window, how busy the machine was, and each worker's peak resident memory.
        var usage: ResourceUsage?
        /// Workers that exited on their own, each with how and its log's last line; the run stops
        /// at the first, since nothing restarts them here.
        var exitedWorkers: [String] = []
    }

    let harness: PipelineHarness
    let workersPerStage: Int
    let stallTimeout: Duration
    let keep: Bool
    var showProgress = true

    init(port: UInt16, partitions: Int, maxInFlight: Int, workersPerStage: Int, stallTimeout: Duration, keep: Bool) throws {
        // The harness tears the broker down under its own clients at the end: keep only errors.
        routeKafkaLogs(to: Logger(label: "receiptd.harness", level: .error))
        harness = try PipelineHarness(port: port, partitions: partitions, maxInFlight: maxInFlight,
                                      bundleId: SubmissionGenerator.bundleId) {
            // A notification that arrives before its owner's submission waits in the retry tiers:
            // short tiers keep the demo quick, and they add up to well within the stall timeout.
            $0.retry.tierDelaysSeconds = [1, 2, 5, 15]
            // The demo's notification receiver (its last phase) listens on loopback only.
            $0.notifications.host = "127.0.0.1"
        }
        self.workersPerStage = workersPerStage
        self.stallTimeout = stallTimeout
        self.keep = keep
    }

    /// Runs the submissions through the pipeline.
    /// - Parameters:
    ///   - submissions: what to publish and account for.
    ///   - warmup: published and accounted for first, outside the timing (group joins, caches).
    ///   - owners: the expected owner view, checked once every submission is accounted for.
    ///   - notifications: renewals the fake App Store pushes to `receiptd notifications` afterwards
    ///     (``NotificationLoop``; 0: none), outside the accounting above.
    func execute(_ submissions: [SubmissionGenerator.Submission], warmup: [SubmissionGenerator.Submission] = [],
                 owners: [String: ExpectedEntitlement]? = nil, notifications: Int = 0) async throws -> Result {
        defer {
            // Our own clients may still be connected when the broker goes away: that is expected.
            KafkaLogging.bootstrap { _ in }
            harness.close(keep: keep)
        }
        for stage in StageName.receiptStages { try harness.startWorkers(stage, count: workersPerStage) }
        let tally = try harness.makeTally()
        let tallyTask = Task { await tally.run() }
        let producer = try harness.makeProducer()
        var publisher = SubmissionPublisher(producer: producer, topic: harness.configuration.topics.submitted, tally: tally)
        if !warmup.isEmpty {
            try await publisher.submit(warmup)
            let deadline = ContinuousClock.now + stallTimeout
            while tally.accountedCount < warmup.count, ContinuousClock.now < deadline {
                if harness.hasExitedWorker {
                    return await abandon(tally: tally, tallyTask: tallyTask, producer: producer, submitted: 0)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let baseline = tally.accountedCount
        let total = baseline + submissions.count

        let names = Dictionary(uniqueKeysWithValues: harness.workers.map { ($0.pid, $0.name) })
        let startSample = ResourceSample.take([0] + names.keys)
        tally.expectAccounted(total)
        let started = ContinuousClock.now
        try await publisher.submit(submissions)
        var lastAccounted = -1
        var lastProgress = ContinuousClock.now
        var lastReport = ContinuousClock.now
        var complete = false
        while true {
            let accounted = tally.accountedCount - baseline
            if accounted + baseline >= total { complete = true; break }
            if harness.hasExitedWorker {
                return await abandon(tally: tally, tallyTask: tallyTask, producer: producer, submitted: submissions.count)
            }
            if try await publisher.releaseSettled() > 0 || accounted != lastAccounted {
                lastAccounted = accounted
                lastProgress = ContinuousClock.now
            } else if ContinuousClock.now - lastProgress > stallTimeout {
                break
            }
            if showProgress, ContinuousClock.now - lastReport >= .seconds(1) {
                lastReport = .now
                let seconds = Double((ContinuousClock.now - started).components.seconds) + 0.001
                printError(String(format: "  %6d / %d accounted, %d waiting for an earlier step  (%.0f/s)", accounted,
                                  submissions.count, publisher.waiting, Double(accounted) / seconds))
            }
            // Only the checks above wait on this; the window's end is the tally's.
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = (complete ? tally.completedAt : nil).map { $0 - started } ?? ContinuousClock.now - started
        let usage = ResourceUsage(from: startSample, to: ResourceSample.take([0] + names.keys), workers: names)
        await producer.close()
        var ownerCheck: OwnerStateCheck.Result?
        if let owners {
            if showProgress { printError("  checking the owner view (\(owners.count) owner entitlements)") }
            ownerCheck = await harness.ownerStateCheck(stallTimeout: stallTimeout).run(expected: owners)
        }
        let counts = tally.snapshot
        var loop: NotificationLoop.Result?
        if notifications > 0 {
            if showProgress { printError("  notification loop: the fake App Store pushes \(notifications) renewals to receiptd notifications") }
            loop = await NotificationLoop(harness: harness, count: notifications, timeout: stallTimeout * 2).run()
        }
        let clean = await harness.stopWorkers()
        tallyTask.cancel()
        await tally.close()
        return Result(submitted: submissions.count, counts: counts, elapsed: elapsed, complete: complete,
                      cleanWorkerExits: clean, workers: harness.workers.count, owners: ownerCheck, loop: loop, usage: usage)
    }

    /// Ends a run a worker left: nothing restarts it here, so waiting out the stall timeout would
    /// only hide why. The result names the workers that exited, with their logs' last lines (the
    /// directory holding the logs goes with the run unless kept).
    private func abandon(tally: OutcomeTally, tallyTask: Task<Void, Never>, producer: KafkaProducer,
                         submitted: Int) async -> Result {
        let exited = harness.exitedWorkers
        await producer.close()
        let counts = tally.snapshot
        let clean = await harness.stopWorkers()
        tallyTask.cancel()
        await tally.close()
        return Result(submitted: submitted, counts: counts, elapsed: .zero, complete: false, cleanWorkerExits: clean,
                      workers: harness.workers.count, exitedWorkers: exited)
    }
}
