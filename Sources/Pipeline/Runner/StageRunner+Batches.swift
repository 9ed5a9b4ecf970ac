import Observability

/// Batches for stages that only compute (``Stage/waitsOnOutside`` false, e.g. ingest): one task
/// takes several chain heads, processes them one after the other, sends all their outputs in one
/// `send` and completes them under one lock, where a record of its own would cost a task, a send
/// awaiting its own acknowledgement and a lock round trip for each step. Delivery semantics are the
/// per-record ones: a record counts as done only once its outputs are acknowledged, a record of a
/// partition released meanwhile writes nothing, a failed send fails every record of the batch.
///
/// Only for such stages: a stage that waits (a network call, a state store holding a key until an
/// earlier record's outputs are acknowledged) would make the whole batch wait, or wait forever
/// for a record of its own batch.
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
    /// this task, until no chain has one.
    func runBatch(_ heads: ArraySlice<WorkItem>) async {
        var items = Array(heads)
        while !items.isEmpty {
            var prepared: [Prepared] = []
            var outcomes: [(WorkItem, Completion)] = []
            prepared.reserveCapacity(items.count)
            for item in items {
                let scope = DeliveryScope(partition: item.record.partition)
                if let record = await prepare(item, scope: scope) {
                    prepared.append(record)
                } else {
                    scope.settle(delivered: false)
                    outcomes.append((item, .abandoned))
                }
            }
            outcomes += await deliverAll(prepared)
            for record in prepared { record.scope.settle(delivered: false) }  // no effect once delivered
            for case (let item, .deliveryFailed(let error)) in outcomes {
                let failure = StageRunnerError(.deliveryFailed, "outputs of \(item.record.position) were not acknowledged",
                                               underlying: error)
                await perform(mutate { $0.stop(failure: failure) })
                break
            }
            let (effects, next) = mutate { state -> (RunnerState.Effects, [WorkItem]) in
                var merged = RunnerState.Effects(), next: [WorkItem] = []
                for (item, completion) in outcomes {
                    let processed = if case .processed = completion { true } else { false }
                    let effects = state.complete(item, processed: processed)
                    merged.merge(effects)
                    if let following = effects.next { next.append(following) }
                }
                return (merged, next)
            }
            items = next
            await perform(effects)
        }
    }

    /// Sends the outputs of every record still current in one `send`. Records with a state output
    /// (one pinned to the input's partition, sent only after the others) go one by one.
    private func deliverAll(_ records: [Prepared]) async -> [(WorkItem, Completion)] {
        guard records.count > 1, !records.contains(where: { $0.outbound.contains { $0.partition != nil } }) else {
            var outcomes: [(WorkItem, Completion)] = []
            for record in records { outcomes.append((record.item, await deliver(record))) }
            return outcomes
        }
        let current = inspect { state in records.map { state.isCurrent($0.item) } }
        var outbound: [OutboundRecord] = []
        for (record, isCurrent) in zip(records, current) where isCurrent { outbound += record.outbound }
        var failure: (any Error)?
        if !outbound.isEmpty {
            do {
                try await sink.send(outbound)
            } catch {
                failure = error
            }
        }
        let cancelled = Task.isCancelled
        let stillCurrent = failure == nil ? current : inspect { state in records.map { state.isCurrent($0.item) } }
        var loggedFailure = false
        return zip(records, zip(current, stillCurrent)).map { record, currency -> (WorkItem, Completion) in
            guard currency.0 else {
                record.logger.notice("partition released before delivery; abandoning the record to its next owner")
                return (record.item, .abandoned)
            }
            guard let failure else {
                settleDelivered(record)
                return (record.item, .processed)
            }
            // Cancelled, or fenced by a lost assignment (whose unsent outputs were discarded).
            if cancelled || !currency.1 { return (record.item, .abandoned) }
            if !loggedFailure {
                loggedFailure = true
                record.logger.error("delivery failed; offsets of the batch not stored, stopping", metadata: [
                    LoggingKeys.errorMessage: .string("\(failure)"),
                ])
            }
            return (record.item, .deliveryFailed(failure))
        }
    }
}
