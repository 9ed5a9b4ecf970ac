/// Which partitions a ``PartitionAssignmentHook`` has prepared, as pure state (part of
/// ``RunnerState``, used only when the runner has a hook).
///
/// A record of a partition that is not ready is *held*: not admitted (so its offset cannot be
/// stored), queued in offset order, and its partition paused by the runner. Assignment starts a
/// preparation *batch* for the partitions that are neither ready nor being prepared; when the
/// batch's hook call returns, its partitions become ready and their held records are released,
/// in order, into the delay gate and admission. A record may arrive before its partition's
/// assignment event (a Kafka source merges two streams): it is held the same way.
struct ReadinessGate {
    /// A batch to hand to the hook.
    struct Batch: Sendable, Equatable {
        var id: Int
        var partitions: [TopicPartition]
        /// The earliest assignment among them: the state they get belongs to it and later ones.
        var epoch: AssignmentEpoch
    }

    private(set) var ready: Set<TopicPartition> = []
    /// Partitions handed to the hook and not yet released (what to release when the runner stops).
    private(set) var tracked: Set<TopicPartition> = []
    private var batches: [Int: (partitions: Set<TopicPartition>, epoch: AssignmentEpoch)] = [:]
    private var held: [TopicPartition: [InboundRecord]] = [:]
    private var nextBatch = 0

    /// Records held, across partitions.
    var heldCount: Int { held.values.reduce(0) { $0 + $1.count } }

    /// Partitions in batches being prepared.
    var preparingPartitionCount: Int { batches.values.reduce(0) { $0 + $1.partitions.count } }

    /// Batches being prepared.
    var preparing: [Int] { batches.keys.sorted() }

    /// Whether records of `tp` may be admitted.
    func isReady(_ tp: TopicPartition) -> Bool { ready.contains(tp) }

    /// Holds a record of a partition that is not ready.
    mutating func hold(_ record: InboundRecord) {
        held[record.topicPartition, default: []].append(record)
    }

    /// Partitions were assigned. - Returns: the batch to prepare, if any partition needs it.
    mutating func assigned(_ partitions: [TopicPartition], epoch: AssignmentEpoch) -> Batch? {
        let busy = batches.values.reduce(into: Set<TopicPartition>()) { $0.formUnion($1.partitions) }
        let fresh = Set(partitions).subtracting(ready).subtracting(busy)
        guard !fresh.isEmpty else { return nil }
        return start(fresh, epoch: epoch)
    }

    /// A batch's hook call returned.
    /// - Returns: the held records of its partitions, in offset order per partition (nothing when
    ///   the batch was cancelled meanwhile).
    mutating func prepared(_ id: Int) -> [InboundRecord] {
        guard let partitions = batches.removeValue(forKey: id)?.partitions else { return [] }
        ready.formUnion(partitions)
        var released: [InboundRecord] = []
        for tp in partitions.sorted() {
            released += held.removeValue(forKey: tp) ?? []
        }
        return released
    }

    /// Partitions are being revoked: they are no longer ready and their held records are dropped
    /// (their offsets were never stored, so the next owner receives them again).
    /// - Returns: batches to cancel (any that includes a revoked partition), and a new batch for
    ///   the other partitions of those batches, which still need preparing.
    mutating func drop(_ partitions: Set<TopicPartition>) -> (cancel: [Int], restart: Batch?) {
        ready.subtract(partitions)
        for tp in partitions { held[tp] = nil }
        var cancel: [Int] = []
        var remaining: Set<TopicPartition> = []
        var epoch: AssignmentEpoch?
        for (id, batch) in batches where !batch.partitions.isDisjoint(with: partitions) {
            cancel.append(id)
            remaining.formUnion(batch.partitions.subtracting(partitions))
            epoch = min(epoch ?? batch.epoch, batch.epoch)
            batches[id] = nil
        }
        guard let epoch, !remaining.isEmpty else { return (cancel.sorted(), nil) }
        return (cancel.sorted(), start(remaining, epoch: epoch))
    }

    /// Stops everything (shutdown or end of input): held records are dropped.
    /// - Returns: the batches to cancel.
    mutating func dropAll() -> [Int] {
        held.removeAll()
        defer { batches.removeAll() }
        return batches.keys.sorted()
    }

    /// The hook must release these partitions. - Returns: those it was asked to prepare.
    mutating func release(_ partitions: Set<TopicPartition>) -> [TopicPartition] {
        let released = tracked.intersection(partitions)
        tracked.subtract(released)
        ready.subtract(released)
        return released.sorted()
    }

    private mutating func start(_ partitions: Set<TopicPartition>, epoch: AssignmentEpoch) -> Batch {
        let id = nextBatch
        nextBatch += 1
        batches[id] = (partitions, epoch)
        tracked.formUnion(partitions)
        return Batch(id: id, partitions: partitions.sorted(), epoch: epoch)
    }
}
