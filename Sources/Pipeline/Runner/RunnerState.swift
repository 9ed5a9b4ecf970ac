import Foundation
import Kafka

/// A record handed to a worker. Its ``InboundRecord/epoch`` ties it to one assignment of its
/// partition: a partition revoked and assigned again has a new epoch, so late completions of the
/// old assignment cannot touch the new bookkeeping.
///
/// A class: the runner's queues, batches and results pass each record along several times, and
/// a reference is one retain where the record's fields are five.
final class WorkItem: Sendable {
    let record: InboundRecord
    /// Its partition's bookkeeping for the assignment it was admitted under.
    let slot: PartitionSlot
    /// The hash of its chain (assignment and key), taken once: the chains' table is looked up
    /// several times per record.
    let chainHash: Int

    init(record: InboundRecord, slot: PartitionSlot) {
        self.record = record
        self.slot = slot
        var hasher = Hasher()
        hasher.combine(ObjectIdentifier(slot))
        if let key = record.key {
            key.withUnsafeBytes { hasher.combine(bytes: $0) }  // in one call, not byte by byte
            hasher.combine(key.count)
        } else {
            hasher.combine(record.offset)
        }
        chainHash = hasher.finalize()
    }

    var epoch: AssignmentEpoch { record.epoch }
}

/// One assignment of one partition as the runner tracks it. Each admitted record holds its slot,
/// so a record's steps reach the bookkeeping without looking its partition up by topic name.
/// A slot replaced by a later assignment, or released after its revocation, is retired: its
/// records are no longer current. Mutated only under the runner's lock (``RunnerState``), hence
/// unchecked.
final class PartitionSlot: @unchecked Sendable {
    let topicPartition: TopicPartition
    /// The assignment whose records it admits; those of earlier ones are stale.
    let epoch: AssignmentEpoch
    var progress = PartitionProgress()
    var running = 0
    var revoking = false
    /// Its records write nothing more: the assignment was lost (``PartitionRevocation/lost``),
    /// or its revocation outlasted the time the group waits for this member.
    var fenced = false
    /// No longer the runner's slot for its partition.
    var retired = false
    /// Set while one completion of a batch collects the slots whose watermark advanced.
    var advanced = false

    init(_ topicPartition: TopicPartition, epoch: AssignmentEpoch) {
        self.topicPartition = topicPartition
        self.epoch = epoch
    }
}

/// The runner's bookkeeping as a pure state machine: every transition runs under the runner's
/// lock and returns the side effects (stores, pause/resume, spawning) for the caller to perform
/// outside it (swift-kafka-client's "state machine returns actions" shape).
///
/// Ordering: records are grouped into *chains* by (partition, key). A chain has at most one
/// record running; later records of the same key wait in the chain's queue and are started, in
/// offset order, by the worker that finishes the previous one. Records with a `null` key form a
/// chain of their own (Kafka gives them no ordering). Different chains run in parallel.
///
/// Admission: at most `maxInFlight` records are in flight. A record registered beyond that (one
/// the source had handed over before the pause took effect, or a gate's release) waits in
/// arrival order for room, not in flight; it is dropped with its partition on revocation.
///
/// Pausing: a partition is paused while the runner is backpressured (all of them), while the
/// delay gate holds one of its records (``DelayGate``), or, with a ``PartitionAssignmentHook``,
/// until the hook has prepared it (``ReadinessGate``); one ``PauseTracker`` applies the union.
struct RunnerState {
    /// Something a waiter waits for.
    enum WaitCondition: Sendable {
        /// No record of these partitions running and no offset store of theirs in flight.
        case partitionsQuiet(Set<TopicPartition>)
        /// Nothing running and no offset store in flight anywhere.
        case allQuiet
        /// Not backpressured, or the source has been told to pause (so pulling more is safe).
        case pauseSettled
        /// The delay gate's held set changed since `version` (or the runner is stopping).
        case gateChanged(since: Int)
    }

    /// A chain's identity: its assignment (the slot), and its key, or for a `null` key the record's
    /// offset, making each such record its own chain. Any record of the chain stands for it.
    private struct ChainKey: Hashable {
        let item: WorkItem

        init(_ item: WorkItem) { self.item = item }

        static func == (lhs: ChainKey, rhs: ChainKey) -> Bool {
            let a = lhs.item, b = rhs.item
            guard a.slot === b.slot, a.chainHash == b.chainHash else { return false }
            if a.record.key == nil { return b.record.key == nil && a.record.offset == b.record.offset }
            return a.record.key == b.record.key
        }

        func hash(into hasher: inout Hasher) { hasher.combine(item.chainHash) }

        var topicPartition: TopicPartition { item.slot.topicPartition }
    }

    let maxInFlight: Int
    let resumeThreshold: Int

    private var partitions: [TopicPartition: PartitionSlot] = [:]
    private var known: Set<TopicPartition> = []
    /// Queued (not yet started) records per active chain; an entry exists while a record of the
    /// chain is ready or running.
    private var chains: [ChainKey: [WorkItem]] = [:]
    /// Chain heads waiting for the spawner.
    private var ready: [WorkItem] = []
    /// Registered records waiting for room under `maxInFlight`, oldest first.
    private var waiting = FIFOBuffer<WorkItem>()
    private var backpressured = false
    private var pause = PauseTracker()
    private var gate = DelayGate()
    /// Present when the runner has a ``PartitionAssignmentHook``.
    private var readiness: ReadinessGate?

    /// Admitted records not yet finished or dropped.
    private(set) var inFlight = 0
    /// Records running on a worker.
    private(set) var running = 0
    /// Most records ever in flight at once (for tests and metrics).
    private(set) var peakInFlight = 0
    /// Times the runner reached `maxInFlight` and paused its partitions (backpressure engaged).
    private(set) var backpressureEngagements = 0
    /// Whether the runner stopped admitting and starting work.
    private(set) var stopping = false
    /// Whether the source ended: nothing more is admitted, but everything admitted is finished.
    private(set) var inputFinished = false
    /// The first fatal error (delivery or source failure).
    private(set) var failure: (any Error)?
    /// Whether `run()` was called.
    var hasRun = false

    /// Records the delay gate holds (read from a retry tier, not yet due; not admitted).
    var heldCount: Int { gate.count }
    /// When the delay gate's earliest held record becomes due.
    var nextDue: Date? { gate.nextDue }
    /// Changes whenever the delay gate's held set changes.
    var gateVersion: Int { gate.version }
    /// Records held until their partition is prepared.
    var unpreparedHeldCount: Int { readiness?.heldCount ?? 0 }
    /// Records registered but waiting for room under `maxInFlight` (not in flight).
    var waitingCount: Int { waiting.count }
    /// Partitions whose preparation has not returned yet.
    var partitionsBeingPrepared: Int { readiness?.preparingPartitionCount ?? 0 }

    /// - Parameters:
    ///   - gatesReadiness: whether partitions must be prepared (a ``PartitionAssignmentHook``)
    ///     before their records are admitted.
    init(maxInFlight: Int, resumeThreshold: Int, gatesReadiness: Bool = false) {
        self.maxInFlight = maxInFlight
        self.resumeThreshold = resumeThreshold
        readiness = gatesReadiness ? ReadinessGate() : nil
    }

    // MARK: transitions

    /// A record arrived from the source.
    mutating func admit(_ record: consuming InboundRecord) -> Effects {
        let current = partitions[record.topicPartition]
        return admit(record, current: current)
    }

    /// ``admit(_:)`` with the partition's slot already looked up.
    private mutating func admit(_ record: consuming InboundRecord, current: PartitionSlot?) -> Effects {
        var effects = Effects()
        let slot: PartitionSlot
        if let current, current.epoch >= record.epoch {
            slot = current
        } else {
            current?.retired = true
            slot = PartitionSlot(record.topicPartition, epoch: record.epoch)
            partitions[slot.topicPartition] = slot
        }
        // A slot's partition is known from its first record until its revocation begins.
        if slot !== current || slot.revoking, !known.contains(slot.topicPartition) {
            known.insert(slot.topicPartition)
            syncPause(&effects)
        }
        guard !stopping, !inputFinished, !slot.revoking else { return effects }
        // Fetched under an assignment revoked since: the partition's owner receives it again.
        guard slot.epoch == record.epoch else {
            effects.staleEpoch = record.epoch
            effects.offered = record.position
            return effects
        }
        // A re-delivery of an offset this assignment already admitted (a consumer seeking back
        // after a fetch error or a resume): it is in flight or done already, so it is dropped.
        guard slot.progress.canAdmit(record.offset) else {
            effects.replayedOffset = record.offset
            effects.offered = record.position
            return effects
        }
        slot.progress.admit(record.offset)
        let item = WorkItem(record: record, slot: slot)
        if inFlight < maxInFlight && waiting.isEmpty {
            start(item, &effects)
        } else {
            waiting.append(item)
        }
        if !backpressured && inFlight + waitingCount >= maxInFlight {
            backpressured = true
            backpressureEngagements += 1
            syncPause(&effects)
        }
        return effects
    }

    /// Puts a registered record in flight: at the head of its chain (ready for the spawner) or
    /// queued behind the chain's running record.
    private mutating func start(_ item: WorkItem, _ effects: inout Effects) {
        inFlight += 1
        peakInFlight = max(peakInFlight, inFlight)
        let chain = ChainKey(item)
        if let entry = chains.index(forKey: chain) {
            chains.values[entry].append(item)
        } else {
            chains[chain] = []
            ready.append(item)
            effects.wakeSpawner = true
        }
    }

    /// Starts waiting records while there is room, in arrival order; those of a partition revoked
    /// or re-assigned meanwhile are dropped (redelivered to the partition's owner).
    private mutating func startWaiting(_ effects: inout Effects) {
        while inFlight < maxInFlight, !stopping, let item = waiting.popFirst() {
            if !item.slot.retired, !item.slot.revoking { start(item, &effects) }
        }
    }

    /// A record arrived from the source. It passes the readiness gate first (held until its
    /// partition is prepared), then the delay gate: admitted now when it is due (or carries no
    /// due time), held otherwise.
    /// - Parameters:
    ///   - due: the record's `notBefore` (retry tiers only; nil elsewhere).
    ///   - now: the current instant.
    mutating func offer(_ record: consuming InboundRecord, due: Date?, now: Date) -> Effects {
        let tp = record.topicPartition
        let current = partitions[tp]
        guard !stopping, !inputFinished, current?.revoking != true else { return Effects() }
        if readiness?.isReady(tp) == false {
            var effects = Effects()
            effects.offered = record.position
            readiness!.hold(record)
            effects.heldUnprepared = true
            known.insert(tp)
            syncPause(&effects)
            return effects
        }
        let wasHeld = gate.isHolding(tp)
        guard !gate.offer(record, due: due, now: now) else { return admit(record, current: current) }
        var effects = Effects()
        known.insert(tp)
        if !wasHeld, let due {
            effects.heldUntil = due
            effects.offered = record.position
        }
        syncPause(&effects)
        return effects
    }

    /// Offers an event's records in order (``offer(_:due:now:)``).
    /// - Returns: their effects merged, and those of each record that was dropped or held by a
    ///   gate (``Effects/offered`` says which), for the caller to log.
    mutating func offer(_ records: [InboundRecord], due: (InboundRecord) -> Date?,
                        now: Date) -> (effects: Effects, notable: [Effects]) {
        var merged = Effects(), notable: [Effects] = []
        // Through the buffer, whose elements are borrowed: each record is copied once, into its work item.
        records.withUnsafeBufferPointer { records in
            for record in records {
                let effects = offer(record, due: due(record), now: now)
                if effects.offered != nil { notable.append(effects) }
                merged.merge(effects)
            }
        }
        return (merged, notable)
    }

    /// The delay gate's timer fired: admit every held record that is due, and resume the
    /// partitions that hold nothing any more.
    mutating func releaseDue(now: Date) -> Effects {
        var effects = Effects()
        guard !stopping else { return effects }
        for record in gate.release(now: now) {
            effects.merge(admit(record))
            effects.released += 1
        }
        if effects.pauseChange == nil { syncPause(&effects) }
        return effects
    }

    /// The source assigned partitions (as its assignment `epoch`): with a hook, they are prepared
    /// before records are admitted. The runner's own bookkeeping of a partition starts with its
    /// first record, whose epoch it takes.
    mutating func assigned(_ newPartitions: [TopicPartition], epoch: AssignmentEpoch) -> Effects {
        var effects = Effects()
        known.formUnion(newPartitions)
        if !stopping, !inputFinished, let batch = readiness?.assigned(newPartitions, epoch: epoch) {
            effects.prepare.append(batch)
        }
        syncPause(&effects)
        return effects
    }

    /// A preparation batch finished: its partitions are ready, their held records pass on to
    /// the delay gate and admission, in offset order.
    /// - Parameters:
    ///   - id: the batch.
    ///   - due: a record's due time (``offer(_:due:now:)``).
    ///   - now: the current instant.
    mutating func prepared(_ id: Int, due: (InboundRecord) -> Date?, now: Date) -> Effects {
        var effects = Effects()
        guard readiness != nil else { return effects }
        for record in readiness!.prepared(id) {
            effects.merge(offer(record, due: due(record), now: now))
            effects.releasedUnprepared += 1
        }
        syncPause(&effects)
        return effects
    }

    /// The spawner takes the chain heads to start. - Returns: `stop` once the runner is stopping.
    mutating func takeReady() -> (items: [WorkItem], stop: Bool) {
        guard !stopping, !(inputFinished && inFlight == 0) else { return ([], true) }
        let items = ready
        ready.removeAll()
        for item in items { item.slot.running += 1 }
        running += items.count
        return (items, false)
    }

    /// A worker finished a record. `processed` is false when it was abandoned (cancelled) or its
    /// delivery failed: it is then not marked done and its chain's queue is dropped.
    mutating func complete(_ item: WorkItem, processed: Bool) -> Effects {
        var (effects, next) = complete([(item: item, processed: processed)])
        effects.next = next.first
        return effects
    }

    /// Workers finished a batch's records (``complete(_:processed:)`` for each), with one offset
    /// store per partition for all of them. - Returns: the effects, and the next records of the
    /// records' chains.
    mutating func complete(_ finished: [(item: WorkItem, processed: Bool)]) -> (Effects, next: [WorkItem]) {
        var effects = Effects(), next: [WorkItem] = []
        var advanced: [PartitionSlot] = []
        for (item, processed) in finished {
            if finish(item, processed: processed), !item.slot.advanced {
                item.slot.advanced = true
                advanced.append(item.slot)
            }
            continueChain(of: item, processed: processed, &effects)
            if let following = effects.next {
                next.append(following)
                effects.next = nil
            }
        }
        for slot in advanced {
            slot.advanced = false
            if let offset = slot.progress.nextStore() { effects.stores.append((slot.topicPartition, offset, slot.epoch)) }
        }
        return (effects, next)
    }

    /// Marks a record no longer running (done when `processed`). - Returns: whether its
    /// partition's watermark advanced.
    private mutating func finish(_ item: WorkItem, processed: Bool) -> Bool {
        inFlight -= 1
        running -= 1
        item.slot.running -= 1
        return !item.slot.retired && processed && item.slot.progress.complete(item.record.offset)
    }

    /// Hands the finished record's chain its next record, or ends the chain (dropping its queue
    /// when the record was not processed), then starts waiting records if there is room.
    private mutating func continueChain(of item: WorkItem, processed: Bool, _ effects: inout Effects) {
        // One lookup for the chain, then its entry by index.
        if let entry = chains.index(forKey: ChainKey(item)) {
            if processed, !stopping, !item.slot.retired, !item.slot.revoking, let head = chains.values[entry].first {
                chains.values[entry].removeFirst()  // in place: a copy of the queue would be duplicated here
                head.slot.running += 1
                running += 1
                effects.next = head
            } else {
                inFlight -= chains.remove(at: entry).value.count
            }
        }
        startWaiting(&effects)
        releaseBackpressureIfBelowThreshold(&effects)
        if inputFinished && inFlight == 0 { effects.wakeSpawner = true }
    }

    /// The source ended: admit nothing more, finish what was admitted (queued records included),
    /// then let the spawner stop.
    mutating func finishInput() -> Effects {
        var effects = Effects()
        inputFinished = true
        gate.dropAll()
        effects.cancelPreparations = readiness?.dropAll() ?? []
        effects.wakeSpawner = true
        return effects
    }

    /// An offset store ended.
    mutating func storeFinished(_ tp: TopicPartition, epoch: AssignmentEpoch, success: Bool) -> Effects {
        var effects = Effects()
        guard let slot = partitions[tp], slot.epoch == epoch else { return effects }
        if let offset = slot.progress.storeFinished(success: success) {
            effects.stores.append((tp, offset, epoch))
        }
        return effects
    }

    /// Starts stores for partitions whose watermark is ahead of their stored offset (e.g. after a
    /// failed store), when none is in flight.
    mutating func flushStores(_ only: Set<TopicPartition>? = nil) -> Effects {
        var effects = Effects()
        for (tp, slot) in partitions where only?.contains(tp) ?? true {
            if let offset = slot.progress.nextStore() {
                effects.stores.append((tp, offset, slot.epoch))
            }
        }
        return effects
    }

    /// A pause/resume exchange ended.
    mutating func pauseFinished() -> Effects {
        var effects = Effects()
        if let change = pause.finished() { effects.pauseChange = change }
        return effects
    }

    /// Partitions are being revoked: stop starting their records and drop those not started.
    /// When the assignment was `lost`, records already running are fenced as well (``fence(_:)``).
    mutating func beginRevocation(_ revoked: Set<TopicPartition>, lost: Bool = false) -> Effects {
        var effects = Effects()
        for tp in revoked { partitions[tp]?.revoking = true }
        if lost { fence(revoked) }
        known.subtract(revoked)
        pause.forget(revoked)
        gate.drop(revoked)
        if let (cancel, restart) = readiness?.drop(revoked) {
            effects.cancelPreparations = cancel
            if let restart { effects.prepare.append(restart) }
        }
        dropUnstarted { revoked.contains($0) }
        startWaiting(&effects)
        syncPause(&effects)
        releaseBackpressureIfBelowThreshold(&effects)
        return effects
    }

    /// Fences partitions: their running records end abandoned at their next delivery instead of
    /// writing (``isCurrent(_:)``); their offsets are not stored.
    mutating func fence(_ tps: Set<TopicPartition>) {
        for tp in tps { partitions[tp]?.fenced = true }
    }

    /// Revocation is settled: forget the partitions (a later assignment starts afresh).
    /// - Returns: the partitions the hook must release.
    mutating func finishRevocation(_ revoked: Set<TopicPartition>) -> [TopicPartition] {
        for tp in revoked where partitions[tp]?.revoking == true {
            partitions[tp]?.retired = true
            partitions[tp] = nil
        }
        return readiness?.release(revoked) ?? []
    }

    /// The runner stopped: every partition the hook prepared (or was asked to) must be released.
    mutating func releaseAllPrepared() -> [TopicPartition] {
        guard let tracked = readiness?.tracked else { return [] }
        return readiness!.release(tracked)
    }

    /// Stop admitting and starting records (shutdown, end of input, or a fatal error); records
    /// not yet started are dropped and will be redelivered after a restart.
    mutating func stop(failure error: (any Error)? = nil) -> Effects {
        var effects = Effects()
        if failure == nil, let error { failure = error }
        if !stopping {
            stopping = true
            gate.dropAll()
            effects.cancelPreparations = readiness?.dropAll() ?? []
            dropUnstarted { _ in true }
        }
        effects.wakeSpawner = true
        return effects
    }

    // MARK: queries

    /// Whether `item` may still write: it belongs to its partition's current assignment (false
    /// once the partition was released after a revocation, or revoked and assigned again) and
    /// the partition is not fenced.
    func isCurrent(_ item: WorkItem) -> Bool {
        !item.slot.retired && !item.slot.fenced
    }

    /// Whether a wait condition holds.
    func holds(_ condition: WaitCondition) -> Bool {
        switch condition {
        case .partitionsQuiet(let tps):
            return tps.allSatisfy { tp in
                guard let partition = partitions[tp] else { return true }
                return partition.running == 0 && partition.progress.storing == nil
            }
        case .allQuiet:
            return running == 0 && partitions.values.allSatisfy { $0.progress.storing == nil }
        case .pauseSettled:
            return !backpressured || stopping || pause.isSettled
        case .gateChanged(let version):
            return gate.version != version || stopping
        }
    }

    // MARK: helpers

    private mutating func dropUnstarted(where matches: (TopicPartition) -> Bool) {
        waiting.removeAll { matches($0.record.topicPartition) }
        var keptReady: [WorkItem] = []
        for item in ready {
            let tp = item.record.topicPartition
            guard matches(tp) else { keptReady.append(item); continue }
            let chain = ChainKey(item)
            inFlight -= 1 + (chains[chain]?.count ?? 0)
            chains[chain] = nil
        }
        ready = keptReady
        for (chain, queue) in chains where matches(chain.topicPartition) && !queue.isEmpty {
            inFlight -= queue.count
            chains[chain] = []
        }
    }

    private mutating func releaseBackpressureIfBelowThreshold(_ effects: inout Effects) {
        guard backpressured, !stopping, inFlight + waitingCount <= resumeThreshold else { return }
        backpressured = false
        syncPause(&effects)
    }

    /// Tells the pause tracker what should be paused now: every known partition while
    /// backpressured, plus the partitions the delay gate holds, plus those not prepared yet.
    private mutating func syncPause(_ effects: inout Effects) {
        let unprepared = readiness.map { known.subtracting($0.ready) } ?? []
        let wanted = (backpressured ? known : []).union(gate.partitions.intersection(known)).union(unprepared)
        if let change = pause.set(wanted) { effects.pauseChange = change }
    }
}
