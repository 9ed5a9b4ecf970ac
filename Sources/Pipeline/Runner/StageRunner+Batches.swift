import Observability
import Synchronization

/// Batches: one task takes several chain heads, processes them one after the other, sends their
/// outputs together (one `send`, two when some are state outputs) and completes them under one
/// lock, where a record of its own would cost a task, a send awaiting its own acknowledgement and a
/// lock round trip for each step. Every record of a stage that waits on nothing but computation or
/// earlier records' deliveries runs so (``StageWaiting/nothing``: ingest;
/// ``StageWaiting/deliveries``: fulfil, owners); of a stage that waits on the outside (verify),
/// every record whose input cannot (a JWS checked offline), while the others get a task of their
/// own under the processing timeout, so one slow App Store call holds up no other record.
/// Delivery semantics are the per-record ones: a record counts as done only once its outputs are
/// acknowledged, a record of a partition released meanwhile writes nothing, a failed send fails
/// every record in it.
///
/// A record whose state store must wait for a pending update of its key first has the records its
/// batch processed before it delivered (``DeliveryScope/beforeWaiting()``): the update it waits for
/// may be one of theirs (fulfil's ledger is keyed by purchase, not by record key), and a batch that
/// waits holds back no outputs that another batch could be waiting for.
extension StageRunner {
    /// Chain heads one batch task takes at most: enough to spread the per-batch costs thin, small
    /// enough that a batch's outputs are out within about a millisecond.
    static var maxBatchSize: Int { 64 }

    /// Splits the ready chain heads into batches, at least two while there are two, so both cores
    /// of a small machine get work.
    static func batches(of items: [WorkItem]) -> [ArraySlice<WorkItem>] {
        let size = max(1, min(maxBatchSize, (items.count + 1) / 2))
        return stride(from: 0, to: items.count, by: size).map { items[$0..<min($0 + size, items.count)] }
    }

    /// Runs a batch of chain heads, then the next records of their chains as the next batch, on
    /// this task, until no chain has one. For a stage that waits on the outside, each record whose
    /// input may (``Stage/mayWaitOnOutside(_:)``) leaves the batch for a task of its own under the
    /// processing timeout, and its chain goes on there.
    func runBatch(_ heads: ArraySlice<WorkItem>) async {
        var items = Array(heads)
        guard S.waitsOn == .outside else {
            while !items.isEmpty { items = await runRound(items) { _, _ in } }
            return
        }
        await withDiscardingTaskGroup { chains in
            while !items.isEmpty {
                items = await runRound(items) { item, input in
                    chains.addTask { await self.runChain(startingWith: item, input: input) }
                }
            }
        }
    }

    /// Processes one round of a batch, delivers it and completes it. - Returns: the next records
    /// of the round's chains.
    private func runRound(_ items: [WorkItem], divert: (WorkItem, consuming S.Input) -> Void) async -> [WorkItem] {
        let batch = HeldBatch()
        if S.processesRounds {
            await processTogether(items, into: batch, divert: divert)
        } else {
            await processOneByOne(items, into: batch, divert: divert)
        }
        await deliverHeld(batch)
        let outcomes = batch.outcomes
        guard !outcomes.isEmpty else { return [] }
        for case (let item, .deliveryFailed(let error)) in outcomes {
            let failure = StageRunnerError(.deliveryFailed, "outputs of \(item.record.position) were not acknowledged",
                                           underlying: error)
            await perform(mutate { $0.stop(failure: failure) })
            break
        }
        let finished = outcomes.map { item, completion in
            (item: item, processed: { if case .processed = completion { true } else { false } }())
        }
        let (effects, next) = mutate { $0.complete(finished) }
        await perform(effects)
        return next
    }

    /// A round processed record by record. For a stage that waits on the outside, each record is
    /// decoded just before it is processed, and one whose input may wait is handed to `divert`
    /// instead. Decoding the whole round first (up to 64 inputs) let the inputs decoded after a
    /// record push its JWS out of the core's cache before it was verified: about 1% of verify's CPU
    /// (docs/benchmarks.md, session 28; verify now processes rounds, below, which gain more).
    private func processOneByOne(_ items: [WorkItem], into batch: HeldBatch, divert: (WorkItem, consuming S.Input) -> Void) async {
        var deliverEarlier: (@Sendable () async -> Void)?
        if S.waitsOn == .deliveries { deliverEarlier = { @Sendable in await self.deliverHeld(batch) } }
        for item in items {
            var input: S.Input?
            // An undecodable record is processed without an input: decoding it again dead-letters it.
            if S.waitsOn == .outside, let decoded = try? S.decodeInput(item.record.value) {
                if stage.mayWaitOnOutside(decoded) {
                    divert(item, decoded)
                    continue
                }
                input = consume decoded
            }
            let scope = DeliveryScope(partition: item.record.partition, epoch: item.epoch, deliverEarlier: deliverEarlier)
            if let record = await prepare(item, input: input.take(), scope: scope, timed: false) {
                batch.hold(record)
            } else {
                scope.settle(delivered: false)
                batch.finished([(item, .abandoned)])
            }
        }
    }

    /// A round of a stage that processes rounds (``Stage/processesRounds``): every record decoded
    /// (those whose input may wait on the outside diverted, undecodable ones dead-lettered), the
    /// inputs processed in one call, then each result routed, in order. The round's records share
    /// its clocks: its start (their durations include waiting for the round) and its "now".
    private func processTogether(_ items: [WorkItem], into batch: HeldBatch, divert: (WorkItem, consuming S.Input) -> Void) async {
        var starts: [RecordStart] = [], round: [(input: S.Input, context: StageContext)] = []
        let started = ContinuousClock.now, now = clock.now()
        starts.reserveCapacity(items.count)
        round.reserveCapacity(items.count)
        for item in items {
            let scope = DeliveryScope(partition: item.record.partition, epoch: item.epoch)
            let input: S.Input
            do {
                input = try S.decodeInput(item.record.value)
            } catch {
                batch.hold(undecodable(item, scope: scope, error: error))
                continue
            }
            if S.waitsOn == .outside, stage.mayWaitOnOutside(input) {
                divert(item, input)
                continue
            }
            let start = RecordStart(item: item, scope: scope, subject: S.subject(of: input), started: started, now: now,
                                    runner: self)
            round.append((consume input, start.context))
            starts.append(consume start)
        }
        guard !round.isEmpty else { return }
        // Handed over, not shared: a stage that mutates the round (verify pops it) would otherwise
        // copy the whole array first, retaining every string of every input.
        var results = await stage.process(round: consume round)
        precondition(results.count == starts.count, "\(S.self).process(round:) returned \(results.count) results for \(starts.count) inputs")
        // Reversed through the buffers (whose swaps are moves), then popped: each start and result
        // moves out, where iterating them would copy each (and retain what it holds).
        starts.withUnsafeMutableBufferPointer { $0.reverse() }
        results.withUnsafeMutableBufferPointer { $0.reverse() }
        while let start = starts.popLast(), let result = results.popLast() {
            if let record = prepared(start, result: consume result) {
                batch.hold(record)
            } else {
                start.scope.settle(delivered: false)
                batch.finished([(start.item, .abandoned)])
            }
        }
    }

    /// Delivers what the batch holds: every processed record at its end, or those processed
    /// before a record that is about to wait.
    private func deliverHeld(_ batch: HeldBatch) async {
        let records = batch.takeHeld()
        guard !records.isEmpty else { return }
        let outcomes = await deliver(records)
        // A processed record's scope was settled by its delivery; the others' are settled here.
        for (record, (_, completion)) in zip(records, outcomes) {
            if case .processed = completion { continue }
            record.scope.settle(delivered: false)
        }
        batch.finished(outcomes)
    }
}
