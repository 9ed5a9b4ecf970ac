import Foundation
import Kafka
import Observability
import Pipeline

/// Drives one run of the harness: start workers, publish submissions, watch the tally until
/// every submission is accounted for (or nothing moves for the stall timeout), stop workers.
struct PipelineRun {
    struct Result {
        var submitted: Int
        var counts: OutcomeTally.Counts
        var elapsed: Duration
        var complete: Bool
        var cleanWorkerExits: Int
        var workers: Int
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
                                      bundleId: SubmissionGenerator.bundleId)
        self.workersPerStage = workersPerStage
        self.stallTimeout = stallTimeout
        self.keep = keep
    }

    /// Runs the submissions through the pipeline.
    /// - Parameters:
    ///   - submissions: what to publish and account for.
    ///   - warmup: published and accounted for first, outside the timing (group joins, caches).
    func execute(_ submissions: [SubmissionGenerator.Submission],
                 warmup: [SubmissionGenerator.Submission] = []) async throws -> Result {
        defer {
            // Our own clients may still be connected when the broker goes away: that is expected.
            KafkaLogging.bootstrap { _ in }
            harness.close(keep: keep)
        }
        for stage in StageName.allCases { try harness.startWorkers(stage, count: workersPerStage) }
        let tally = try harness.makeTally()
        let tallyTask = Task { await tally.run() }
        let producer = try harness.makeProducer()
        let topic = harness.configuration.topics.submitted
        func publish(_ batch: [SubmissionGenerator.Submission]) async throws {
            for chunk in stride(from: 0, to: batch.count, by: 1000) {
                let slice = batch[chunk..<min(chunk + 1000, batch.count)]
                let reports = try await producer.sendAll(slice.map { submission in
                    KafkaProducerMessage(topic: topic, key: Array(submission.key.utf8), value: submission.value)
                })
                tally.register(origins: zip(reports, slice).map { report, submission in
                    ("\(report.topic)/\(report.partition)/\(report.offset)", submission.submissionId)
                })
            }
        }
        if !warmup.isEmpty {
            try await publish(warmup)
            let deadline = ContinuousClock.now + stallTimeout
            while tally.snapshot.accounted.count < warmup.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let baseline = tally.snapshot.accounted.count
        let total = baseline + submissions.count

        let started = ContinuousClock.now
        try await publish(submissions)
        await producer.close()

        var lastAccounted = -1
        var lastProgress = ContinuousClock.now
        var complete = false
        while true {
            let accounted = tally.snapshot.accounted.count - baseline
            if accounted + baseline >= total { complete = true; break }
            if accounted != lastAccounted {
                lastAccounted = accounted
                lastProgress = ContinuousClock.now
            } else if ContinuousClock.now - lastProgress > stallTimeout {
                break
            }
            if showProgress {
                let seconds = Double((ContinuousClock.now - started).components.seconds) + 0.001
                printError(String(format: "  %6d / %d accounted  (%.0f/s)", accounted, submissions.count, Double(accounted) / seconds))
            }
            try await Task.sleep(for: .seconds(1))
        }
        let elapsed = ContinuousClock.now - started
        let clean = await harness.stopWorkers()
        tallyTask.cancel()
        await tally.close()
        return Result(submitted: submissions.count, counts: tally.snapshot, elapsed: elapsed, complete: complete,
                      cleanWorkerExits: clean, workers: harness.workers.count)
    }
}
