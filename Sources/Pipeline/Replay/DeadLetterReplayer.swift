import Foundation
import Observability

/// Moves dead letters back to the topics they came from: the logic of `receiptd replay`,
/// independent of the command line and of Kafka (it works over a ``DeadLetterReader`` and a
/// ``RecordSink``), so tests run it over ``InMemoryTransport``.
///
/// Reads the ranges the reader opened, filters each record (``ReplayFilter``), and republishes
/// the matches (``ReplayRepublisher``): in batches, each acknowledged before the next, at most
/// ``Options/rate`` records per second. A dry run publishes nothing and lists each match instead.
///
/// - Important: replaying the same dead letters twice publishes them twice. Fulfil suppresses
///   the second grant by event id: the replayed records keep their key, so they land in the
///   partition that holds the first, whose ledger (``KeyedStateStore``, rebuilt from the
///   output partition) knows the grant even across fulfil restarts.
public struct DeadLetterReplayer: Sendable {
    /// How a run behaves.
    public struct Options: Sendable {
        /// Which dead letters to move.
        public var filter: ReplayFilter
        /// List instead of publishing.
        public var dryRun: Bool
        /// Most records published per second (nil: as fast as acknowledgements come).
        public var rate: Double?
        /// The run's id, written to each replayed record.
        public var replayId: String
        /// The topics a replay may publish to (the stage inputs); a dead letter naming another
        /// is skipped. Empty allows any.
        public var allowedTopics: Set<String>
        /// Most records per acknowledged batch (default 100).
        public var batchSize: Int
        /// Seconds between progress reports (default 1).
        public var progressInterval: TimeInterval

        /// Creates options.
        public init(filter: ReplayFilter = ReplayFilter(), dryRun: Bool = false, rate: Double? = nil,
                    replayId: String = UUID().uuidString.lowercased(), allowedTopics: Set<String> = [],
                    batchSize: Int = 100, progressInterval: TimeInterval = 1) {
            self.filter = filter
            self.dryRun = dryRun
            self.rate = rate
            self.replayId = replayId
            self.allowedTopics = allowedTopics
            self.batchSize = batchSize
            self.progressInterval = progressInterval
        }
    }

    private let reader: any DeadLetterReader
    private let sink: any RecordSink
    private let clock: any WallClock
    private let logger: Logger

    /// Creates a replayer.
    /// - Parameters:
    ///   - reader: the dead-letter topic.
    ///   - sink: where replayed records are published (an idempotent producer).
    ///   - clock: for `receiptd-replayed-at`, the rate limit and progress.
    ///   - logger: start and end of the run.
    public init(reader: any DeadLetterReader, sink: any RecordSink, clock: any WallClock = SystemWallClock(),
                logger: Logger = .disabled) {
        self.reader = reader
        self.sink = sink
        self.clock = clock
        self.logger = logger
    }

    /// Runs one replay.
    /// - Parameters:
    ///   - options: filter, dry run, rate, id.
    ///   - listing: called with one line per matched record in a dry run (``DeadLetter/listing``).
    ///   - progress: called every ``Options/progressInterval`` and once at the end.
    /// - Returns: the counts.
    /// - Throws: ``PipelineConfigurationError`` for an inconsistent filter or rate before anything
    ///   is read; ``ReplayError`` (with the counts so far) when reading or publishing fails.
    public func run(_ options: Options, listing: (String) -> Void = { _ in },
                    progress: (ReplayProgress) -> Void = { _ in }) async throws -> ReplaySummary {
        try options.filter.validate()
        if let rate = options.rate, !(rate > 0) {
            throw PipelineConfigurationError("--rate must be a positive number of records per second, got \(rate)")
        }
        var summary = ReplaySummary(replayId: options.replayId, dryRun: options.dryRun)
        let filter = options.filter
        let ranges: [DeadLetterRange]
        do {
            ranges = try await reader.open(partition: filter.partition, fromOffset: filter.fromOffset, toOffset: filter.toOffset)
        } catch {
            await reader.close()
            throw ReplayError(summary: summary, underlying: error)
        }
        logger.notice("replay starting", metadata: [
            LoggingKeys.replayId: .string(options.replayId), "replay.dry_run": .bool(options.dryRun),
            "replay.partitions": .integer(ranges.count),
        ])
        var run = Run(options: options, ranges: ranges, started: clock.now())
        do {
            for try await record in reader.records() {
                summary.scanned += 1
                run.covered(record)
                let letter = DeadLetter(record)
                if filter.matches(letter) {
                    summary.matched += 1
                    try await take(letter, &run, &summary, listing: listing)
                }
                let now = clock.now()
                if now.timeIntervalSince(run.lastReport) >= options.progressInterval {
                    run.lastReport = now
                    progress(run.progress(summary, now: now))
                }
            }
            try await flush(&run, &summary)
        } catch {
            await reader.close()
            logger.error("replay stopped", metadata: [LoggingKeys.replayId: .string(options.replayId),
                                                      LoggingKeys.errorMessage: .string("\(error)")])
            throw ReplayError(summary: summary, underlying: error)
        }
        await reader.close()
        run.coverAll()
        progress(run.progress(summary, now: clock.now()))
        logger.notice("replay finished", metadata: [
            LoggingKeys.replayId: .string(options.replayId), "replay.replayed": .integer(summary.replayed),
            "replay.matched": .integer(summary.matched),
        ])
        return summary
    }

    private func take(_ letter: DeadLetter, _ run: inout Run, _ summary: inout ReplaySummary,
                      listing: (String) -> Void) async throws {
        guard let topic = letter.originalTopic else {
            summary.skippedNoOriginalTopic += 1
            return
        }
        guard run.options.allowedTopics.isEmpty || run.options.allowedTopics.contains(topic) else {
            summary.skippedUnknownTopic += 1
            return
        }
        summary.byTopic[topic, default: 0] += 1
        summary.byReason[letter.reason?.rawValue ?? "-", default: 0] += 1
        if run.options.dryRun {
            listing(letter.listing)
            summary.replayed += 1
            return
        }
        guard let record = ReplayRepublisher.republished(letter, replayId: run.options.replayId, at: clock.now()) else { return }
        run.batch.append(record)
        if run.batch.count >= run.batchLimit { try await flush(&run, &summary) }
    }

    /// Publishes the batch, no sooner than the rate allows, and waits for its acknowledgement.
    private func flush(_ run: inout Run, _ summary: inout ReplaySummary) async throws {
        guard !run.batch.isEmpty else { return }
        if let rate = run.options.rate {
            let last = summary.replayed + run.batch.count - 1
            try await clock.sleep(until: run.started.addingTimeInterval(Double(last) / rate))
        }
        try await sink.send(run.batch)
        summary.replayed += run.batch.count
        run.batch.removeAll(keepingCapacity: true)
    }

    /// The bookkeeping of one run.
    private struct Run {
        let options: Options
        let ranges: [Int32: DeadLetterRange]
        let total: Int64
        let started: Date
        let batchLimit: Int
        var lastReport: Date
        var coveredTo: [Int32: Int64] = [:]
        var batch: [OutboundRecord] = []

        init(options: Options, ranges: [DeadLetterRange], started: Date) {
            self.options = options
            self.ranges = Dictionary(ranges.map { ($0.partition, $0) }, uniquingKeysWith: { first, _ in first })
            total = ranges.reduce(0) { $0 + $1.span }
            self.started = started
            lastReport = started
            let perTenthOfASecond = options.rate.map { Int($0 / 10) } ?? options.batchSize
            batchLimit = max(1, min(options.batchSize, perTenthOfASecond))
        }

        mutating func covered(_ record: InboundRecord) {
            coveredTo[record.partition] = record.offset + 1
        }

        mutating func coverAll() {
            for (partition, range) in ranges { coveredTo[partition] = range.end }
        }

        func progress(_ summary: ReplaySummary, now: Date) -> ReplayProgress {
            let covered = ranges.values.reduce(Int64(0)) { sum, range in
                sum + max(0, min(coveredTo[range.partition] ?? range.start, range.end) - range.start)
            }
            return ReplayProgress(covered: covered, total: total, summary: summary, elapsed: now.timeIntervalSince(started))
        }
    }
}
