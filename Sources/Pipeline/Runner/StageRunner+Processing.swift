import Foundation
import Observability

/// Per-record processing: decode, process under a timeout, route, deliver, account.
extension StageRunner {
    /// Runs a chain: the given record (its value already decoded into `input`), then (on the same
    /// task) each next record of its key, each under the processing timeout.
    func runChain(startingWith first: WorkItem, input: S.Input) async {
        var current: WorkItem? = first, decoded: S.Input? = input
        while let item = current {
            let completion = await handle(item, input: decoded.take())
            var processed = false
            switch completion {
            case .processed:
                processed = true
            case .abandoned:
                break
            case .deliveryFailed(let error):
                let failure = StageRunnerError(.deliveryFailed,
                                               "outputs of \(item.record.position) were not acknowledged", underlying: error)
                await perform(mutate { $0.stop(failure: failure) })
            }
            let effects = mutate { $0.complete(item, processed: processed) }
            current = effects.next
            await perform(effects)
        }
    }

    /// Handles one record end to end under a fresh ``DeliveryScope``, which is settled on every
    /// path: delivered when the stage's emitted outputs were acknowledged, not delivered otherwise.
    /// Never throws: every failure is routed or reported.
    func handle(_ item: WorkItem, input: consuming S.Input?) async -> RecordCompletion {
        let scope = DeliveryScope(partition: item.record.partition, epoch: item.epoch)
        let completion: RecordCompletion
        if let prepared = await prepare(item, input: consume input, scope: scope, timed: true) {
            completion = await deliver([prepared])[0].1
        } else {
            completion = .abandoned
        }
        scope.settle(delivered: false)  // no effect when delivery already settled it
        return completion
    }

    /// Decodes (unless `decoded` is given), processes and routes a record (a record that cannot be
    /// decoded or whose result cannot be encoded is routed to the dead-letter topic); `timed`: under
    /// the processing timeout. - Returns: nil when it was abandoned (cancelled while processing).
    func prepare(_ item: WorkItem, input decoded: consuming S.Input? = nil, scope: DeliveryScope, timed: Bool) async -> PreparedRecord? {
        let input: S.Input
        do {
            if let decoded = consume decoded { input = decoded } else { input = try S.decodeInput(item.record.value) }
        } catch {
            return undecodable(item, scope: scope, error: error)
        }
        let start = RecordStart(item: item, scope: scope, subject: S.subject(of: input), started: .now, now: clock.now(),
                                runner: self)
        let result = await process(input, context: start.context, timed: timed)
        return prepared(start, result: result)
    }

    /// What a record's processing starts from: its clocks (`started` for its duration, `now` for
    /// its context; a round reads them once for all its records), attempt and logger, and its
    /// input's subject. The record's metadata is built only if it logs something (most records
    /// never do at the usual levels): its position, and the subject rather than the input, whose
    /// copy would retain every field.
    struct RecordStart {
        let item: WorkItem
        let scope: DeliveryScope
        let started: ContinuousClock.Instant
        let attempt: Int
        let now: Date
        let recordTimestamp: Date
        let subject: SubmissionSubject
        let logger: Logger

        init(item: WorkItem, scope: DeliveryScope, subject: SubmissionSubject, started: ContinuousClock.Instant, now: Date,
             runner: StageRunner) {
            self.item = item
            self.scope = scope
            self.started = started
            self.now = now
            let attempt = RecordHeaders.attempt(in: item.record.headers)
            self.attempt = attempt
            recordTimestamp = item.record.timestamp
            self.subject = subject
            let topic = item.record.topic, partition = item.record.partition, offset = item.record.offset
            logger = runner.logger.with(lazy: {
                StageRunner.metadata(topic: topic, partition: partition, offset: offset, attempt: attempt)
                    .merging(StageRunner.metadata(for: subject)) { _, new in new }
            })
        }

        var context: StageContext {
            StageContext(logger: logger, attempt: attempt, now: now, recordTimestamp: recordTimestamp, delivery: scope)
        }
    }

    /// Routes a processed record's result. - Returns: nil when it was abandoned (cancelled while
    /// processing).
    func prepared(_ start: RecordStart, result: consuming Result<StageResult<S.Output>, any Error>) -> PreparedRecord? {
        if case .failure = result, Task.isCancelled { return nil }
        let record = start.item.record
        let outbound: [OutboundRecord]
        let verdict: RecordVerdict
        do {
            switch consume result {
            case .success(let value):
                (outbound, verdict) = try routeResult(value, record: record, subject: start.subject, now: start.now,
                                                      logger: start.logger)
            case .failure(let error):
                (outbound, verdict) = try routeFailure(error, record: record, subject: start.subject, attempt: start.attempt,
                                                       now: start.now, logger: start.logger)
            }
        } catch {
            // Encoding an output, rejection or outcome failed: a bug, kept safe in the dead-letter topic.
            start.logger.error("could not encode the result; dead-lettering", metadata: [
                LoggingKeys.reason: .string(ReasonCode.encodingFailed.rawValue),
                LoggingKeys.errorMessage: .string(Self.summary(of: error)),
            ])
            let failure = RecordRouter.Failure(reason: .encodingFailed, error: Self.summary(of: error))
            let deadLetter = router.deadLetter(record, failure: failure, attempt: start.attempt, now: start.now)
            return PreparedRecord(item: start.item, scope: start.scope, outbound: [deadLetter],
                                  verdict: .deadLettered(.encodingFailed), started: start.started, logger: start.logger)
        }
        return PreparedRecord(item: start.item, scope: start.scope, outbound: outbound, verdict: verdict, started: start.started,
                              logger: start.logger)
    }

    /// Dead-letters a record whose value does not decode into the stage's input.
    func undecodable(_ item: WorkItem, scope: DeliveryScope, error: any Error) -> PreparedRecord {
        // No input, so no subject: the logger's metadata is the record's position alone.
        let start = RecordStart(item: item, scope: scope, subject: .unknown, started: .now, now: clock.now(), runner: self)
        start.logger.warning("undecodable record dead-lettered", metadata: [
            LoggingKeys.reason: .string(ReasonCode.undecodable.rawValue),
            LoggingKeys.errorMessage: .string(Self.summary(of: error)),
        ])
        let failure = RecordRouter.Failure(reason: .undecodable, error: Self.summary(of: error))
        let deadLetter = router.deadLetter(item.record, failure: failure, attempt: start.attempt, now: start.now)
        return PreparedRecord(item: item, scope: scope, outbound: [deadLetter], verdict: .deadLettered(.undecodable),
                              started: start.started, logger: start.logger)
    }

    /// Sends the results of records processed one after the other (one record, or a batch) and,
    /// once acknowledged, settles their scopes and accounts for them: all outputs in one `send`,
    /// or two when some are state outputs.
    ///
    /// State outputs: an output pinned to the input's partition number is the stage's durable
    /// record of its state (fulfil's ledger); whatever else the records emit is acknowledged first,
    /// so a crash never leaves the state record without the others, which a redelivery (then judged
    /// a duplicate) would not emit again.
    ///
    /// Fence: a record whose partition was released meanwhile (revoked, and the revocation timeout
    /// expired before it finished) sends nothing: the partition's next owner processes it again,
    /// and output written now could reach the output topic after that owner rebuilt its state
    /// from it.
    func deliver(_ records: [PreparedRecord]) async -> [(WorkItem, RecordCompletion)] {
        let current = inspect { state in records.map { state.isCurrent($0.item) } }
        var others: [OutboundRecord] = [], withState = [Bool](repeating: false, count: records.count)
        for index in records.indices where current[index] {
            for output in records[index].outbound {
                if output.partition == nil { others.append(output) } else { withState[index] = true }
            }
        }
        var stillCurrent = current, othersSent = false
        var failure: (any Error)?
        do {
            if !others.isEmpty {
                try await sink.send(others)
                othersSent = true
            }
            if withState.contains(true) {
                // The assignment may have been lost meanwhile: those records' state stays unwritten.
                if othersSent { stillCurrent = inspect { state in records.map { state.isCurrent($0.item) } } }
                var states: [OutboundRecord] = []
                for index in records.indices where withState[index] && stillCurrent[index] {
                    states += records[index].outbound.filter { $0.partition != nil }
                }
                if !states.isEmpty { try await sink.send(states) }
            }
        } catch {
            failure = error
            stillCurrent = inspect { state in records.map { state.isCurrent($0.item) } }
        }
        let cancelled = Task.isCancelled
        var loggedFailure = false
        var tally = StageMetrics.Tally()
        defer { metrics.record(tally) }
        let acknowledged = ContinuousClock.now
        return records.indices.map { index -> (WorkItem, RecordCompletion) in
            let record = records[index]
            guard current[index] else {
                record.logger.notice("partition released before delivery; abandoning the record to its next owner")
                return (record.item, .abandoned)
            }
            if let failure, withState[index] || !othersSent {
                // Cancelled, or fenced by a lost assignment (whose unsent outputs were discarded).
                if cancelled || !stillCurrent[index] { return (record.item, .abandoned) }
                if !loggedFailure {
                    loggedFailure = true
                    record.logger.error("delivery failed; offset not stored, stopping", metadata: [
                        LoggingKeys.errorMessage: .string("\(failure)"),
                    ])
                }
                return (record.item, .deliveryFailed(failure))
            }
            if withState[index], !stillCurrent[index] { return (record.item, .abandoned) }
            settleDelivered(record, at: acknowledged, into: &tally)
            return (record.item, .processed)
        }
    }

    /// Accounts for a record whose outputs were acknowledged at `acknowledged` (its metrics into
    /// its batch's `tally`).
    func settleDelivered(_ prepared: PreparedRecord, at acknowledged: ContinuousClock.Instant,
                         into tally: inout StageMetrics.Tally) {
        prepared.scope.settle(delivered: prepared.verdict == .emitted)
        tally.add(prepared.verdict, input: prepared.item, outbound: prepared.outbound,
                  elapsed: prepared.started.duration(to: acknowledged))
    }

    /// Runs `process` on the calling task, or under the per-record timeout (``ProcessingWatchdog``)
    /// when `timed` (an input that may wait on the outside).
    private func process(_ input: S.Input, context: StageContext, timed: Bool) async -> Result<StageResult<S.Output>, any Error> {
        let stage = self.stage
        guard timed else {
            do {
                return .success(try await stage.process(input, context: context))
            } catch {
                return .failure(error)
            }
        }
        let timeout = configuration.processingTimeout
        let result = await watchdog.run(timeout: timeout) { () -> Result<StageResult<S.Output>, any Error> in
            do {
                return .success(try await stage.process(input, context: context))
            } catch {
                return .failure(error)
            }
        }
        return result ?? .failure(ProcessingTimeoutError(timeout: timeout))
    }

    private func routeResult(_ result: consuming StageResult<S.Output>, record: InboundRecord, subject: SubmissionSubject,
                             now: Date, logger: Logger) throws -> ([OutboundRecord], RecordVerdict) {
        switch consume result {
        case .emit(let outputs):
            logger.debug("emitting \(outputs.count) record(s)")
            return (try router.emit(outputs, from: record), .emitted)
        case .reject(let reason, let detail, let extra):
            let merged = extra.filling(from: subject)
            logger.info("input rejected", metadata: Self.metadata(for: merged).merging([
                LoggingKeys.reason: .string(reason.rawValue),
            ]) { _, new in new })
            return ([try router.reject(record, reason: reason, detail: detail, subject: merged, now: now)], .rejected(reason))
        case .done(let outcome, let extra):
            let merged = extra.filling(from: subject)
            logger.info("input ended without output", metadata: Self.metadata(for: merged).merging([
                LoggingKeys.stageOutcome: .string(outcome.rawValue),
            ]) { _, new in new })
            return ([try router.outcome(record, outcome: outcome, subject: merged, now: now)], .done(outcome))
        }
    }

    private func routeFailure(_ error: any Error, record: InboundRecord, subject: SubmissionSubject, attempt: Int,
                              now: Date, logger: Logger) throws -> ([OutboundRecord], RecordVerdict) {
        let classified = error as? any ClassifiedError
        let reason = classified?.reason ?? .unclassified
        let metadata: Logger.Metadata = [
            LoggingKeys.reason: .string(reason.rawValue),
            LoggingKeys.errorMessage: .string(Self.summary(of: error)),
        ]
        if classified?.disposition == .permanent {
            logger.info("permanent failure; rejecting", metadata: metadata)
            let detail = (error as? StageError)?.detail ?? Self.summary(of: error)
            return ([try router.reject(record, reason: reason, detail: detail, subject: subject, now: now)], .rejected(reason))
        }
        let failure = classified.map { RecordRouter.Failure($0, error: Self.summary(of: error)) }
            ?? RecordRouter.Failure(reason: reason, error: Self.summary(of: error))
        switch retryPolicy.decide(attempt: attempt, error: error) {
        case .retry(let tier, let notBefore):
            logger.notice("transient failure; sending to a retry tier", metadata: metadata.merging([
                LoggingKeys.retryTier: .integer(tier),
                LoggingKeys.retryNotBefore: .string(notBefore.map(RecordHeaders.timestamp) ?? "now"),
            ]) { _, new in new })
            return ([router.retry(record, tier: tier, notBefore: notBefore, failure: failure, attempt: attempt, now: now)],
                    .retried(tier: tier, reason: reason))
        case .deadLetter:
            logger.warning("transient failure; dead-lettering", metadata: metadata)
            return ([router.deadLetter(record, failure: failure, attempt: attempt, now: now)], .deadLettered(reason))
        }
    }

    /// Log metadata for a record's position and attempt.
    static func metadata(topic: String, partition: Int32, offset: Int64, attempt: Int) -> Logger.Metadata {
        [LoggingKeys.kafkaTopic: .string(topic), LoggingKeys.kafkaPartition: .integer(partition),
         LoggingKeys.kafkaOffset: .integer(offset), LoggingKeys.stageAttempt: .integer(attempt)]
    }

    /// Log metadata for a subject: ids and the payload hash, never the payload.
    static func metadata(for subject: SubmissionSubject) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let value = subject.submissionId { metadata[LoggingKeys.submissionId] = .string(value) }
        if let value = subject.payloadSHA256 { metadata[LoggingKeys.payloadSHA256] = .string(value) }
        if let value = subject.transactionId { metadata[LoggingKeys.transactionIdHash] = SubmissionSubject.loggedTransactionId(value) }
        return metadata
    }

    /// A bounded one-line description of an error. Decoding errors are reduced to their coding
    /// path, because their debug descriptions can quote input values.
    static func summary(of error: any Error) -> String {
        if let decoding = error as? DecodingError {
            switch decoding {
            case .keyNotFound(let key, let context):
                return "missing key \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                let path = context.codingPath.map(\.stringValue).joined(separator: ".")
                return path.isEmpty ? "not a valid contract document" : "invalid value at \(path)"
            @unknown default:
                return "undecodable"
            }
        }
        let text = String(describing: error)
        return text.count > 512 ? String(text.prefix(512)) + "..." : text
    }
}
