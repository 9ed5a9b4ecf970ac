import Foundation
import Observability
import Synchronization

/// Runs one ``Stage`` over a ``RecordSource`` and a ``RecordSink``: the single place that knows
/// how consume → decode → process → route → await acknowledgement → store offset works.
///
/// **Delivery (at-least-once).** A record's outputs (or its rejection, outcome, retry or dead
/// letter) are sent and *acknowledged* before the record counts as done, and offsets are stored
/// per partition as a contiguous watermark: offset N is stored only once every admitted record
/// ≤ N of that partition is done. If the sink fails, the record is not marked done, the runner
/// stops, and ``run()`` throws ``StageRunnerError/Code/deliveryFailed`` so a restart redelivers
/// it.
///
/// **Concurrency and ordering.** Up to ``StageRunnerConfiguration/maxInFlight`` records are in
/// flight, processed concurrently in child tasks of one task group, with per-key ordering
/// (parallel-consumer's KEY order): records with the same key in a partition are processed one
/// at a time in offset order; different keys in parallel. Records run in batches
/// (`StageRunner+Batches.swift`), with the same guarantees per record, except those whose input
/// may wait on the outside (``Stage/mayWaitOnOutside(_:)``), which get a task each under the
/// processing timeout.
///
/// **Backpressure: pause, keep pulling.** When `maxInFlight` is reached the runner pauses every
/// assigned partition and resumes them once in-flight records drop to the resume threshold. It
/// keeps pulling events meanwhile instead of simply not pulling, because with Kafka the poll
/// loop must keep running: rebalance callbacks are served from it and a consumer that stops
/// polling for `max.poll.interval.ms` is evicted from the group. Records a source had already
/// handed over may still arrive after a pause (``KafkaRecordSource``'s bounded
/// ``SourceEventChannel``, 64 records by default), and the gates release their held records in
/// bulk: such records are registered (their offsets count for the watermark) but wait, in arrival
/// order, for room, so ``peakInFlight`` never exceeds `maxInFlight` (the chaos run checks every
/// worker's peak). Nothing is buffered unboundedly.
///
/// **Retry tiers and the delay gate (non-blocking retries).** A transient failure sends the record
/// to a retry tier of the stage's input (`<input>.retry.<n>`, chosen by the ``RetryPolicy``) with
/// a due time (`receiptd-not-before`); the worker's source reads the input *and* its tiers. A
/// record read from a tier that is not due yet is *held* by the delay gate (``DelayGate``): not
/// admitted, so its offset is not stored, and its partition is paused; a timer task admits it
/// when the wall clock reaches its due time and resumes the partition. Nothing sleeps in the
/// processing path and pulling never stops, so other partitions keep flowing and Kafka's poll
/// loop keeps running (`max.poll.interval.ms` never expires). Held records of a revoked partition
/// are dropped (the next owner receives them again, since their offsets were not stored), and so
/// are held records at shutdown.
///
/// **Partition readiness.** With a ``PartitionAssignmentHook`` (fulfil's ledger), records of a
/// partition are admitted only once the hook has prepared it: on ``SourceEvent/assigned(_:)`` the
/// runner pauses the new partitions and starts preparing them in a task of their own (retried
/// after failures); records that arrive meanwhile (fetched before the pause took effect, or ahead
/// of the assignment event) are held in offset order, exactly like the delay gate's, and released
/// when the partition is ready. Pulling never stops, so revocations are still served during a
/// long preparation; a revocation cancels it. The hook releases partitions after revocation and
/// when the runner stops.
///
/// **Revocation.** On ``SourceEvent/revoked(_:)`` the runner stops starting records of those
/// partitions (queued ones are dropped, to be redelivered to the next owner), waits up to
/// ``StageRunnerConfiguration/revocationTimeout`` for the running ones and their offset stores,
/// then acknowledges. Pulling pauses while it waits, as a Kafka rebalance callback would.
///
/// **End of input.** When the source's stream ends, every admitted record (queued ones
/// included) is finished and its offset stored before ``run()`` returns.
///
/// **Shutdown.** ``shutdownGracefully()`` stops pulling, drops records not yet started (they are
/// redelivered after a restart), lets running records finish for up to ``StageRunnerConfiguration/shutdownGracePeriod`` (then
/// cancels them), stores offsets and returns. Cancelling the task that runs ``run()`` is the
/// hard stop: Swift cancels the child tasks, so in-flight records are abandoned unless they
/// finish anyway; offsets of finished records are still stored. Wire both like
/// swift-service-lifecycle: graceful shutdown first, cancellation after a deadline.
///
/// - Important: a stage must honour task cancellation; a timed-out or shut-down record waits for
///   its `process` call to return.
public final class StageRunner<S: Stage>: Sendable {
    let stage: S
    let source: any RecordSource
    let sink: any RecordSink
    let configuration: StageRunnerConfiguration
    let retryPolicy: any RetryPolicy
    let logger: Logger
    let metrics: StageMetrics
    let clock: any WallClock
    let router: RecordRouter
    let assignmentHook: (any PartitionAssignmentHook)?
    let preparations = PreparationTasks()
    let watchdog = ProcessingWatchdog()
    /// What every retry tier of the input starts with: most records come from the input itself,
    /// and this tells them apart without building the tier names (``dueTime(of:)``).
    private let retryTierPrefix: String

    private let state: Mutex<Machine>
    private let wakeups: AsyncStream<Void>
    private let wakeupContinuation: AsyncStream<Void>.Continuation

    private struct Machine {
        var runner: RunnerState
        var waiters: [Int: (RunnerState.WaitCondition, CheckedContinuation<Void, Never>)] = [:]
        var nextWaiterId = 0
    }

    /// Creates a runner.
    /// - Parameters:
    ///   - stage: the transform to run.
    ///   - source: where records come from (a consumer-group member for the stage's input).
    ///   - sink: where outputs go (an idempotent producer).
    ///   - configuration: limits and topics; validate it first (``StageRunnerConfiguration/validate()``).
    ///   - retryPolicy: what to do with transient failures (default: dead-letter at once).
    ///   - assignmentHook: state to prepare for each assigned partition before its records are
    ///     admitted (fulfil's ledger); nil admits records at once.
    ///   - logger: the logger to derive per-record loggers from.
    ///   - metrics: where `receiptd_stage_*` metrics go.
    ///   - clock: "now" for contexts, timestamps, headers and due times, and the sleeps of the
    ///     delay gate's timer.
    public init(stage: S, source: any RecordSource, sink: any RecordSink,
                configuration: StageRunnerConfiguration = StageRunnerConfiguration(),
                retryPolicy: any RetryPolicy = .never, assignmentHook: (any PartitionAssignmentHook)? = nil,
                logger: Logger, metrics: MetricsRegistry = .shared, clock: any WallClock = SystemWallClock()) {
        precondition(!(S.processesRounds && S.waitsOn == .deliveries),
                     "\(S.self) waits on deliveries, so its records must be processed one by one, not in rounds")
        self.stage = stage
        self.source = source
        self.sink = sink
        self.configuration = configuration
        self.retryPolicy = retryPolicy
        self.assignmentHook = assignmentHook
        self.logger = logger.with([LoggingKeys.stageName: .string(S.name.rawValue)])
        self.metrics = StageMetrics(stage: S.name, registry: metrics)
        self.clock = clock
        self.retryTierPrefix = configuration.topics.retryPrefix(of: S.name)
        self.router = RecordRouter(stage: S.name, topics: configuration.topics,
                                   maxOriginalBytes: configuration.maxOriginalBytes,
                                   maxErrorHeaderBytes: configuration.maxErrorHeaderBytes,
                                   partitioning: S.Output.partitioning)
        let maxInFlight = max(1, configuration.maxInFlight)
        state = Mutex(Machine(runner: RunnerState(maxInFlight: maxInFlight,
                                                  resumeThreshold: min(configuration.effectiveResumeThreshold,
                                                                       maxInFlight - 1),
                                                  gatesReadiness: assignmentHook != nil)))
        (wakeups, wakeupContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.metrics.registerStateFunctions(self)
    }

    /// Creates a runner whose "now" is a closure (tests pass a fixed instant); the delay gate's
    /// timer then sleeps real time. See ``init(stage:source:sink:configuration:retryPolicy:assignmentHook:logger:metrics:clock:)``.
    public convenience init(stage: S, source: any RecordSource, sink: any RecordSink,
                            configuration: StageRunnerConfiguration = StageRunnerConfiguration(),
                            retryPolicy: any RetryPolicy = .never, assignmentHook: (any PartitionAssignmentHook)? = nil,
                            logger: Logger, metrics: MetricsRegistry = .shared, clock: @escaping @Sendable () -> Date) {
        self.init(stage: stage, source: source, sink: sink, configuration: configuration, retryPolicy: retryPolicy,
                  assignmentHook: assignmentHook, logger: logger, metrics: metrics,
                  clock: ClosureWallClock(nowBody: clock) as any WallClock)
    }

    /// Consumes until shut down, the source ends, or a fatal error.
    /// - Throws: ``StageRunnerError`` (`deliveryFailed`, `sourceFailed`, `alreadyRunning`).
    public func run() async throws {
        let firstRun = state.withLock { machine -> Bool in
            defer { machine.runner.hasRun = true }
            return !machine.runner.hasRun
        }
        guard firstRun else { throw StageRunnerError(.alreadyRunning, "a StageRunner runs once") }
        logger.info("stage runner starting", metadata: [LoggingKeys.kafkaTopic: .string(configuration.topics.input(of: S.name))])

        await withTaskGroup(of: Void.self) { pullGroup in
            pullGroup.addTask { await self.pull(from: self.source) }
            pullGroup.addTask { await self.runDelayTimer() }
            if S.waitsOn == .outside {
                // Keeps the per-record timeout: a tick of a quarter of it, at most a second.
                let tick = min(configuration.processingTimeout / 4, .seconds(1))
                pullGroup.addTask { await self.watchdog.run(every: tick) }
            }
            await withDiscardingTaskGroup { workers in
                // The spawner: starts chain heads as they become ready, until the runner stops.
                for await _ in wakeups {
                    let (items, stop) = mutate { $0.takeReady() }
                    for batch in Self.batches(of: items) {
                        workers.addTask { await self.runBatch(batch) }
                    }
                    if stop { break }
                }
                pullGroup.cancelAll()
                await perform(mutate { $0.stop() })
                if Task.isCancelled {
                    logger.notice("stage runner cancelled; abandoning in-flight records")
                } else if await !waitFor(.allQuiet, timeout: configuration.shutdownGracePeriod) {
                    logger.warning("grace period expired; cancelling in-flight records")
                    workers.cancelAll()
                }
            }
        }
        await perform(mutate { $0.flushStores() })
        _ = await waitFor(.allQuiet, timeout: configuration.shutdownGracePeriod)
        await releaseAllPartitions()
        wakeupContinuation.finish()
        let failure = state.withLock { $0.runner.failure }
        logger.info("stage runner stopped")
        if let failure { throw failure }
    }

    /// Asks a running runner to stop pulling, finish in-flight records within the grace period,
    /// store offsets and return. Safe to call at any time, more than once, from any task.
    public func shutdownGracefully() {
        logger.info("graceful shutdown requested")
        mutate { $0.stop() }
        wakeupContinuation.yield()
    }

    /// The most records that were in flight at once (tests check the bound with it).
    public var peakInFlight: Int { state.withLock { $0.runner.peakInFlight } }

    /// How many times ``StageRunnerConfiguration/maxInFlight`` was reached and the partitions were
    /// paused: with ``peakInFlight``, the evidence that backpressure bounded the work.
    public var backpressureEngagements: Int { state.withLock { $0.runner.backpressureEngagements } }

    /// Records the delay gate currently holds (read from a retry tier, not yet due).
    public var heldRecordCount: Int { state.withLock { $0.runner.heldCount } }

    /// Records held until their partition is prepared by the ``PartitionAssignmentHook``.
    public var unpreparedRecordCount: Int { state.withLock { $0.runner.unpreparedHeldCount } }

    /// Records admitted and not yet finished (metrics).
    public var inFlightCount: Int { state.withLock { $0.runner.inFlight } }

    /// Records handed over after backpressure engaged, waiting for room under `maxInFlight`.
    public var waitingRecordCount: Int { state.withLock { $0.runner.waitingCount } }

    /// Assigned partitions the ``PartitionAssignmentHook`` is still preparing (readiness: 0 once
    /// every assigned partition's state is rebuilt).
    public var partitionsBeingPrepared: Int { state.withLock { $0.runner.partitionsBeingPrepared } }

    // MARK: pulling

    /// Reads the source until it ends or the task is cancelled, admitting records and handling
    /// rebalances. Opened on the concrete source type so its event sequence needs no boxing.
    private func pull<Source: RecordSource>(from source: Source) async {
        do {
            for try await event in source.events() {
                switch event {
                case .records(let records):
                    let now = clock.now()
                    let (offered, settled) = mutate { state in
                        (state.offer(records, due: { self.dueTime(of: $0) }, now: now), state.holds(.pauseSettled))
                    }
                    for effects in offered.notable { log(effects) }
                    await perform(offered.effects)
                    // If a resume was still in flight when the limit was reached, the pause is
                    // applied by whoever finishes that resume; do not pull until it has been.
                    if !settled { _ = await waitFor(.pauseSettled, timeout: configuration.processingTimeout) }
                case .assigned(let partitions, let epoch):
                    logger.notice(RunnerLogMessage.partitionsAssigned, metadata: [
                        LoggingKeys.kafkaPartition: .string(describe(partitions)), "assignment.epoch": .string("\(epoch.rawValue)"),
                    ])
                    await perform(mutate { $0.assigned(partitions, epoch: epoch) })
                case .revoked(let revocation):
                    await settle(revocation)
                }
            }
            if Task.isCancelled {
                await perform(mutate { $0.stop() })
            } else {
                logger.info("source ended; finishing admitted records")
                await perform(mutate { $0.finishInput() })
            }
        } catch {
            if Task.isCancelled {
                await perform(mutate { $0.stop() })
            } else {
                logger.error("source failed; stopping", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
                let failure = StageRunnerError(.sourceFailed, "the record source failed", underlying: error)
                await perform(mutate { $0.stop(failure: failure) })
            }
        }
    }

    /// Logs what offering a record did besides admitting it (dropped, or held by a gate).
    private func log(_ effects: RunnerState.Effects) {
        guard let position = effects.offered else { return }
        let partition = MetadataValue.string(position.topicPartition.description)
        if let epoch = effects.staleEpoch {
            logger.info("record of an earlier assignment of its partition dropped", metadata: [
                LoggingKeys.kafkaPartition: partition,
                LoggingKeys.kafkaOffset: .integer(position.offset), "assignment.epoch": .string("\(epoch.rawValue)"),
            ])
        }
        if let offset = effects.replayedOffset {
            logger.warning("source re-delivered an offset already admitted; dropped", metadata: [
                LoggingKeys.kafkaPartition: partition,
                LoggingKeys.kafkaOffset: .integer(offset),
            ])
        }
        if effects.heldUnprepared {
            logger.debug("record held until its partition is prepared", metadata: [
                LoggingKeys.kafkaPartition: partition,
                LoggingKeys.kafkaOffset: .integer(position.offset),
            ])
        }
        if let due = effects.heldUntil {
            logger.info("retry record not due; partition paused until then", metadata: [
                LoggingKeys.kafkaPartition: partition, LoggingKeys.kafkaOffset: .integer(position.offset),
                LoggingKeys.retryNotBefore: .string(RecordHeaders.timestamp(due)),
            ])
        }
    }

    // MARK: the delay gate

    /// The instant a record may be processed: its `receiptd-not-before` when it was read from a
    /// retry tier of this stage's input; nil (no delay) for anything else.
    func dueTime(of record: InboundRecord) -> Date? {
        guard record.topic.utf8.count > retryTierPrefix.utf8.count, record.topic.hasPrefix(retryTierPrefix),
              configuration.topics.retryTier(of: record.topic, stage: S.name) != nil else { return nil }
        return RecordHeaders.notBefore(in: record.headers)
    }

    /// The delay gate's timer: sleeps (on ``clock``) until the earliest held record is due, or
    /// until the held set changes, then admits what is due. Runs beside the pull loop and is
    /// cancelled with it.
    private func runDelayTimer() async {
        while !Task.isCancelled {
            let (due, version) = state.withLock { ($0.runner.nextDue, $0.runner.gateVersion) }
            if let due, due <= clock.now() {
                let effects = mutate { $0.releaseDue(now: self.clock.now()) }
                if effects.released > 0 { logger.debug("\(effects.released) retry record(s) due; admitted") }
                await perform(effects)
                continue
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.signal(when: .gateChanged(since: version)) }
                if let due { group.addTask { try? await self.clock.sleep(until: due) } }
                await group.next()
                group.cancelAll()
            }
        }
    }

    // MARK: revocation

    /// Drains revoked partitions, then acknowledges. Draining is bounded by the revocation
    /// timeout, which is shorter than the time the group waits for this member: past it the
    /// group hands the partitions to another member, which rebuilds their state, and an output of
    /// ours landing after that would be emitted twice. So records still running then are fenced
    /// (they write nothing more) and what the sink holds unsent is discarded. A lost assignment
    /// (the session expired) is already someone else's: it is fenced at once, not drained.
    private func settle(_ revocation: PartitionRevocation) async {
        let revoked = Set(revocation.partitions)
        let partitionsMetadata: Logger.Metadata = [LoggingKeys.kafkaPartition: .string(describe(revocation.partitions))]
        if revocation.lost {
            logger.warning("partitions lost (session expired); abandoning their records in flight", metadata: partitionsMetadata)
        } else {
            logger.info("partitions revoked; draining", metadata: partitionsMetadata)
        }
        await perform(mutate { $0.beginRevocation(revoked, lost: revocation.lost) })
        if revocation.lost {
            await sink.discardUnsent()
        } else if await !waitFor(.partitionsQuiet(revoked), timeout: configuration.revocationTimeout) {
            logger.warning("revocation timeout expired; abandoning the partitions' records in flight", metadata: partitionsMetadata)
            mutate { $0.fence(revoked) }
            await sink.discardUnsent()
        }
        // Fenced records end at their next delivery; their processing is not waited for (a
        // verification may run for the whole record timeout), only a moment for the stores.
        await perform(mutate { $0.flushStores(revoked) })
        _ = await waitFor(.partitionsQuiet(revoked), timeout: .seconds(1))
        let released = mutate { $0.finishRevocation(revoked) }
        if let assignmentHook, !released.isEmpty { await assignmentHook.release(released) }
        revocation.acknowledge()
    }

    private func describe(_ partitions: [TopicPartition]) -> String {
        partitions.sorted().map(\.description).joined(separator: ",")
    }

    // MARK: state and effects

    /// Reads the state under the lock (no transition).
    func inspect<T>(_ body: (RunnerState) -> T) -> T {
        state.withLock { body($0.runner) }
    }

    /// Runs a transition under the lock and resumes the waiters it satisfied (outside the lock).
    @discardableResult
    func mutate<T>(_ body: (inout RunnerState) -> T) -> T {
        let (result, satisfied) = state.withLock { machine -> (T, [CheckedContinuation<Void, Never>]) in
            let result = body(&machine.runner)
            var satisfied: [CheckedContinuation<Void, Never>] = []
            for (id, waiter) in machine.waiters where machine.runner.holds(waiter.0) {
                satisfied.append(waiter.1)
                machine.waiters[id] = nil
            }
            return (result, satisfied)
        }
        for continuation in satisfied { continuation.resume() }
        return result
    }

    /// Performs a transition's side effects: offset stores, pause/resume, waking the spawner.
    func perform(_ effects: RunnerState.Effects) async {
        if !effects.cancelPreparations.isEmpty { await preparations.cancel(effects.cancelPreparations) }
        for batch in effects.prepare { startPreparation(batch) }
        if effects.wakeSpawner { wakeupContinuation.yield() }
        if !effects.stores.isEmpty { await store(effects.stores) }
        if let change = effects.pauseChange {
            await apply(change)
        }
    }

    /// Stores offsets, all the partitions of one transition in one call, and then the next
    /// watermarks their completion releases, until none is left. A failed store is logged and
    /// retried after the partition's next record.
    private func store(_ stores: [(TopicPartition, Int64, AssignmentEpoch)]) async {
        var pending = stores
        while !pending.isEmpty {
            let failures = await source.storeOffsets(pending.map { RecordPosition(topicPartition: $0.0, offset: $0.1) })
            for (tp, offset, _) in pending {
                guard let error = failures[tp] else { continue }
                logger.error("storing offset failed; will retry after the next record", metadata: [
                    LoggingKeys.kafkaTopic: .string(tp.topic), LoggingKeys.kafkaPartition: .integer(tp.partition),
                    LoggingKeys.kafkaOffset: .integer(offset), LoggingKeys.errorMessage: .string("\(error)"),
                ])
            }
            let stored = pending
            pending = mutate { state in
                stored.flatMap { tp, _, epoch in state.storeFinished(tp, epoch: epoch, success: failures[tp] == nil).stores }
            }
        }
    }

    private func apply(_ change: PauseTracker.Change) async {
        var next: PauseTracker.Change? = change
        while let current = next {
            // Each half on its own: a failed pause (a partition revoked a moment ago) must not
            // skip the resume, which would leave those partitions paused for good. Pausing is
            // advisory and resuming an unassigned partition is harmless: log and carry on.
            if !current.pause.isEmpty {
                do {
                    try await source.pause(current.pause)
                    logger.debug("partitions paused", metadata: [LoggingKeys.kafkaPartition: .string(describe(current.pause))])
                } catch {
                    logger.warning("pause failed", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
                }
            }
            if !current.resume.isEmpty {
                do {
                    try await source.resume(current.resume)
                    logger.debug("partitions resumed", metadata: [LoggingKeys.kafkaPartition: .string(describe(current.resume))])
                } catch {
                    logger.warning("resume failed", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
                }
            }
            next = mutate { $0.pauseFinished() }.pauseChange
        }
    }

    /// Waits until `condition` holds or `timeout` passes. - Returns: whether it holds.
    func waitFor(_ condition: RunnerState.WaitCondition, timeout: Duration) async -> Bool {
        if state.withLock({ $0.runner.holds(condition) }) { return true }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.signal(when: condition) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        return state.withLock { $0.runner.holds(condition) }
    }

    private func signal(when condition: RunnerState.WaitCondition) async {
        let id = state.withLock { machine -> Int in
            machine.nextWaiterId += 1
            return machine.nextWaiterId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { machine -> Bool in
                    if machine.runner.holds(condition) || Task.isCancelled { return true }
                    machine.waiters[id] = (condition, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.1.resume()
        }
    }
}
