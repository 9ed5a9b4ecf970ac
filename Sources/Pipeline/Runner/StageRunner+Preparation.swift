import Foundation
import Observability
import Synchronization

/// The runner's side of the ``PartitionAssignmentHook``: one task per preparation batch.
extension StageRunner {
    /// Starts preparing a batch: calls the hook (retrying failures with a doubling delay while the
    /// partitions stay paused), then marks the partitions ready, which releases their held records.
    func startPreparation(_ batch: ReadinessGate.Batch) {
        guard let hook = assignmentHook else { return }
        let partitions = batch.partitions, epoch = batch.epoch
        logger.info("preparing partitions before admitting their records", metadata: [
            LoggingKeys.kafkaPartition: .string(partitions.map(\.description).joined(separator: ",")),
        ])
        preparations.start(batch.id) { [self] in
            let started = ContinuousClock.now
            var delay = configuration.preparationRetryDelay
            while true {
                do {
                    try await hook.prepare(partitions, epoch: epoch)
                    break
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("preparing partitions failed; retrying", metadata: [
                        LoggingKeys.kafkaPartition: .string(partitions.map(\.description).joined(separator: ",")),
                        LoggingKeys.errorMessage: .string(Self.summary(of: error)),
                        "retry.delay": .string("\(delay)"),
                    ])
                    do { try await Task.sleep(for: delay) } catch { return }
                    delay = min(delay * 2, .seconds(30))
                }
            }
            if Task.isCancelled { return }
            logger.info("partitions ready", metadata: [
                LoggingKeys.kafkaPartition: .string(partitions.map(\.description).joined(separator: ",")),
                "prepare.duration": .string("\(started.duration(to: .now))"),
            ])
            let effects = mutate { $0.prepared(batch.id, due: { self.dueTime(of: $0) }, now: self.clock.now()) }
            logger.debug("released \(effects.releasedUnprepared) held record(s) of prepared partitions")
            await perform(effects)
        }
    }

    /// Stops every preparation and tells the hook to release every partition it prepared (the
    /// runner is done; a later run prepares afresh).
    func releaseAllPartitions() async {
        await preparations.cancelAll()
        let released = mutate { $0.releaseAllPrepared() }
        if let hook = assignmentHook, !released.isEmpty { await hook.release(released) }
    }
}

/// The preparation tasks of a runner, by batch id. Unstructured, because a revocation cancels
/// single batches (and waits for them) while others go on.
final class PreparationTasks: Sendable {
    private let tasks = Mutex<[Int: Task<Void, Never>]>([:])

    /// Runs `body` in a new task registered under `id` until it returns.
    func start(_ id: Int, _ body: @escaping @Sendable () async -> Void) {
        tasks.withLock { tasks in
            tasks[id] = Task {
                await body()
                self.tasks.withLock { _ = $0.removeValue(forKey: id) }
            }
        }
    }

    /// Cancels these batches and waits until their tasks have returned.
    func cancel(_ ids: [Int]) async {
        let cancelled = tasks.withLock { tasks in ids.compactMap { tasks.removeValue(forKey: $0) } }
        for task in cancelled { task.cancel() }
        for task in cancelled { await task.value }
    }

    /// Cancels every batch and waits for all of them.
    func cancelAll() async {
        await cancel(tasks.withLock { Array($0.keys) })
    }
}
