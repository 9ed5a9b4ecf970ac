import Testing
@testable import Pipeline

@Suite struct PartitionProgressTests {
    /// A consumer that seeks back (after a fetch error, or a resume to a stale position) re-delivers
    /// offsets the runner already admitted: they are dropped with a warning, never admitted twice,
    /// and the worker does not crash (it once hit a precondition here under the chaos run).
    @Test func aReDeliveredOffsetIsDroppedNotAdmittedTwice() {
        var state = RunnerState(maxInFlight: 10, resumeThreshold: 5)
        func record(_ offset: Int64) -> InboundRecord {
            InboundRecord(topic: "t", partition: 0, offset: offset, key: Array("k\(offset)".utf8), value: [], timestamp: .distantPast)
        }
        _ = state.assigned([TopicPartition(topic: "t", partition: 0)], epoch: AssignmentEpoch(1))
        for offset: Int64 in [5, 6, 7] { #expect(state.admit(record(offset)).replayedOffset == nil) }
        #expect(state.inFlight == 3)
        let again = state.admit(record(6))
        #expect(again.replayedOffset == 6)
        #expect(state.inFlight == 3)
        #expect(state.admit(record(8)).replayedOffset == nil)
        #expect(state.inFlight == 4)
    }

    /// A batch's completions store each partition once, at its watermark after all of them, and
    /// hand on the next record of each chain.
    @Test func aBatchStoresEachPartitionOnce() {
        var state = RunnerState(maxInFlight: 100, resumeThreshold: 50)
        let tps = [TopicPartition(topic: "t", partition: 0), TopicPartition(topic: "t", partition: 1)]
        _ = state.assigned(tps, epoch: AssignmentEpoch(1))
        func record(_ tp: TopicPartition, _ offset: Int64, key: String) -> InboundRecord {
            InboundRecord(topic: tp.topic, partition: tp.partition, offset: offset, key: Array(key.utf8), value: [],
                          timestamp: .distantPast, epoch: AssignmentEpoch(1))
        }
        // Partition 0: three keys; partition 1: two records of one key (the second queues).
        for (offset, key) in [(0, "a"), (1, "b"), (2, "c")] { _ = state.admit(record(tps[0], Int64(offset), key: key)) }
        for offset: Int64 in [0, 1] { _ = state.admit(record(tps[1], offset, key: "same")) }
        let (heads, _) = state.takeReady()
        #expect(heads.count == 4)
        let (effects, next) = state.complete(heads.map { (item: $0, processed: true) })
        let stores = effects.stores.map { "\($0.0.partition)@\($0.1)" }.sorted()
        #expect(stores == ["0@2", "1@0"], "one store per partition, at its watermark")
        #expect(next.map(\.record.offset) == [1], "partition 1's queued record runs next")
        #expect(state.inFlight == 1)
    }

    @Test func watermarkAdvancesOnlyOverContiguousDoneRecords() {
        var progress = PartitionProgress()
        for offset: Int64 in [10, 11, 13, 20] { progress.admit(offset) }  // gaps are fine
        let r1 = progress.complete(13)
        #expect(!r1)
        #expect(progress.watermark == nil)
        let r2 = progress.complete(10)
        #expect(r2)
        #expect(progress.watermark == 10)
        let r3 = progress.complete(11)
        #expect(r3)
        #expect(progress.watermark == 13)
        #expect(progress.outstanding == 1)
        let r4 = progress.complete(20)
        #expect(r4)
        #expect(progress.watermark == 20)
    }

    /// Thousands of sparse offsets completed in a shuffled order (the bookkeeping trims what the
    /// watermark passed on the way): the watermark is always the model's, the highest offset
    /// below which everything admitted is done. Offsets never admitted or completed twice change nothing.
    @Test func watermarkFollowsShuffledCompletionsAcrossTrims() {
        var progress = PartitionProgress()
        let offsets = (0..<5_000).map { Int64($0 * 3 + $0 % 2) }
        for offset in offsets { progress.admit(offset) }
        var generator = SystemRandomNumberGenerator()
        var order = offsets
        // Mostly in order with local shuffles, as batches finish: windows of 64 shuffled.
        for start in stride(from: 0, to: order.count, by: 64) {
            order[start..<min(start + 64, order.count)].shuffle(using: &generator)
        }
        var done = Set<Int64>(), passed = 0
        for (step, offset) in order.enumerated() {
            done.insert(offset)
            let before = progress.watermark
            let advanced = progress.complete(offset)
            while passed < offsets.count, done.contains(offsets[passed]) { passed += 1 }
            let expected = passed > 0 ? offsets[passed - 1] : nil
            #expect(progress.watermark == expected, "after completing \(offset) (step \(step))")
            #expect(advanced == (expected != before))
            let again = progress.complete(offset)
            let unknown = progress.complete(-1) || progress.complete(offsets.last! + 2)
            #expect(!again && !unknown, "a second completion, or one of an offset never admitted, changes nothing")
            #expect(progress.watermark == expected)
        }
        #expect(progress.watermark == offsets.last)
        #expect(progress.outstanding == 0)
    }

    @Test func storesAreSerialisedAndNeverGoBackwards() {
        var progress = PartitionProgress()
        for offset: Int64 in 0..<5 { progress.admit(offset) }
        _ = progress.complete(0)
        let r5 = progress.nextStore()
        #expect(r5 == 0)
        _ = progress.complete(1)
        _ = progress.complete(2)
        let r6 = progress.nextStore()
        #expect(r6 == nil)  // one store in flight
        let r7 = progress.storeFinished(success: true)
        #expect(r7 == 2)  // the newer watermark follows
        let r8 = progress.storeFinished(success: false)
        #expect(r8 == nil)  // a failure waits for a retry
        #expect(progress.stored == 0)
        let r9 = progress.nextStore()
        #expect(r9 == 2)
        let r10 = progress.storeFinished(success: true)
        #expect(r10 == nil)
        #expect(progress.stored == 2)
    }
}

@Suite struct PauseTrackerTests {
    let p0 = TopicPartition(topic: "t", partition: 0)
    let p1 = TopicPartition(topic: "t", partition: 1)

    @Test func oneExchangeAtATimeAndTheLatestWishWins() {
        var tracker = PauseTracker()
        let r11 = tracker.set([p0, p1])
        #expect(r11 == PauseTracker.Change(pause: [p0, p1], resume: []))
        let r12 = tracker.set([])
        #expect(r12 == nil)  // in flight: deferred
        #expect(!tracker.isSettled)
        let r13 = tracker.finished()
        #expect(r13 == PauseTracker.Change(pause: [], resume: [p0, p1]))
        let r14 = tracker.finished()
        #expect(r14 == nil)
        #expect(tracker.isSettled)
    }

    @Test func forgettingRevokedPartitions() {
        var tracker = PauseTracker()
        _ = tracker.set([p0, p1])
        _ = tracker.finished()
        tracker.forget([p0])
        let r15 = tracker.set([])
        #expect(r15 == PauseTracker.Change(pause: [], resume: [p1]))
    }

    /// A pause still in flight when its partition is revoked can reach the consumer after the
    /// partition was assigned again; the tracker must then resume it rather than believe it is
    /// running (the partition would never be read again).
    @Test func aPauseInFlightAcrossARevocationIsUndoneAfterwards() {
        var tracker = PauseTracker()
        let pause = tracker.set([p0])
        #expect(pause == PauseTracker.Change(pause: [p0], resume: []))
        tracker.forget([p0])  // revoked (and maybe assigned again) before the pause was applied
        #expect(tracker.set([]) == nil)  // still in flight
        let followUp = tracker.finished()
        #expect(followUp == PauseTracker.Change(pause: [], resume: [p0]))
        #expect(tracker.finished() == nil)
        #expect(tracker.isSettled)
    }

    @Test func aLatePauseIsSentAgainWhenThePartitionIsWantedPaused() {
        var tracker = PauseTracker()
        _ = tracker.set([p0, p1])
        tracker.forget([p0])
        #expect(tracker.set([p0, p1]) == nil)
        // Whether p0 is paused in the consumer depends on when the pause landed: pause it again.
        #expect(tracker.finished() == PauseTracker.Change(pause: [p0], resume: []))
        #expect(tracker.finished() == nil)
        #expect(tracker.set([p1]) == PauseTracker.Change(pause: [], resume: [p0]))
    }
}

/// Admission under `maxInFlight`: records registered beyond it wait, in order, instead of running.
@Suite struct AdmissionTests {
    let p0 = TopicPartition(topic: "t", partition: 0)
    let p1 = TopicPartition(topic: "t", partition: 1)

    func record(_ tp: TopicPartition, _ offset: Int64) -> InboundRecord {
        InboundRecord(topic: tp.topic, partition: tp.partition, offset: offset, key: Array("k\(tp.partition)-\(offset)".utf8),
                      value: [], timestamp: .distantPast)
    }

    /// A source hands over records after the pause took effect (its buffer, a gate's release): the
    /// peak stays at the bound, and the waiting records start in arrival order as room frees.
    @Test func recordsBeyondTheBoundWaitAndStartInOrder() {
        var state = RunnerState(maxInFlight: 3, resumeThreshold: 1)
        _ = state.assigned([p0, p1], epoch: AssignmentEpoch(1))
        var pauses: [PauseTracker.Change] = []
        for offset: Int64 in 0..<5 {
            if let change = state.offer(record(p0, offset), due: nil, now: .distantPast).pauseChange { pauses.append(change) }
        }
        if let change = state.offer(record(p1, 0), due: nil, now: .distantPast).pauseChange { pauses.append(change) }
        #expect(pauses == [PauseTracker.Change(pause: [p0, p1], resume: [])])
        #expect(state.pauseFinished().pauseChange == nil)
        #expect(state.inFlight == 3)
        #expect(state.waitingCount == 3)
        #expect(state.peakInFlight == 3)
        #expect(state.backpressureEngagements == 1)
        var running = state.takeReady().items
        #expect(running.map(\.record.offset) == [0, 1, 2])

        var resumed: [PauseTracker.Change] = []
        while !running.isEmpty {
            let effects = state.complete(running.removeFirst(), processed: true)
            #expect(state.inFlight <= 3)
            if let change = effects.pauseChange { resumed.append(change) }
            running += state.takeReady().items
            // Resumed only once in flight plus waiting is down to the threshold (1).
            #expect(resumed.isEmpty == (state.inFlight + state.waitingCount > 1))
        }
        #expect(resumed == [PauseTracker.Change(pause: [], resume: [p0, p1])])
        #expect(state.peakInFlight == 3)
        #expect(state.inFlight == 0 && state.waitingCount == 0)
    }

    /// The order records start in is their arrival order (per partition: offset order).
    @Test func waitingRecordsStartInArrivalOrder() {
        var state = RunnerState(maxInFlight: 1, resumeThreshold: 0)
        _ = state.assigned([p0, p1], epoch: AssignmentEpoch(1))
        let arrivals = [record(p0, 0), record(p1, 0), record(p0, 1), record(p1, 1)]
        for item in arrivals { _ = state.offer(item, due: nil, now: .distantPast) }
        var started: [RecordPosition] = []
        var running = state.takeReady().items
        while let item = running.first {
            started.append(item.record.position)
            _ = state.complete(item, processed: true)
            running = state.takeReady().items
        }
        #expect(started == arrivals.map(\.position))
    }

    /// Waiting records of a revoked partition are dropped with it (not in flight, so nothing to
    /// finish); the other partitions' waiting records move up.
    @Test func revocationDropsWaitingRecordsOfItsPartitions() {
        var state = RunnerState(maxInFlight: 2, resumeThreshold: 1)
        _ = state.assigned([p0, p1], epoch: AssignmentEpoch(1))
        for offset: Int64 in 0..<2 { _ = state.offer(record(p0, offset), due: nil, now: .distantPast) }
        _ = state.offer(record(p0, 2), due: nil, now: .distantPast)
        _ = state.offer(record(p1, 0), due: nil, now: .distantPast)
        #expect(state.waitingCount == 2)
        let (running, _) = state.takeReady()
        _ = state.beginRevocation([p0])
        #expect(state.waitingCount == 1)
        #expect(state.inFlight == 2)
        for item in running { _ = state.complete(item, processed: true) }
        #expect(state.waitingCount == 0)
        let (next, _) = state.takeReady()
        #expect(next.map(\.record.position) == [record(p1, 0).position])
        #expect(state.inFlight == 1)
    }

    /// Shutting down drops waiting records: their offsets stay unstored (redelivered after restart).
    @Test func stoppingDropsWaitingRecords() {
        var state = RunnerState(maxInFlight: 1, resumeThreshold: 0)
        _ = state.assigned([p0], epoch: AssignmentEpoch(1))
        for offset: Int64 in 0..<3 { _ = state.offer(record(p0, offset), due: nil, now: .distantPast) }
        let (running, _) = state.takeReady()
        _ = state.stop()
        #expect(state.waitingCount == 0)
        let effects = state.complete(running[0], processed: true)
        #expect(effects.stores.map(\.1) == [0])
        #expect(state.inFlight == 0)
    }
}

/// The runner keys a partition's bookkeeping by the assignment its records were fetched under
/// (``AssignmentEpoch``).
@Suite struct AssignmentEpochTests {
    let p0 = TopicPartition(topic: "t", partition: 0)

    func record(_ offset: Int64, key: String = "same", epoch: UInt64 = 1) -> InboundRecord {
        InboundRecord(topic: "t", partition: 0, offset: offset, key: Array(key.utf8), value: [], timestamp: .distantPast,
                      epoch: AssignmentEpoch(epoch))
    }

    /// A record still running when its partition was released (revocation timeout) and assigned
    /// again must not hold back, or drop when it is abandoned, a record of the same key in the
    /// new assignment: that record's offset would block the watermark for good.
    @Test func aNewAssignmentsRecordDoesNotQueueBehindTheOldOnes() {
        var state = RunnerState(maxInFlight: 10, resumeThreshold: 5)
        _ = state.assigned([p0], epoch: AssignmentEpoch(1))
        _ = state.offer(record(5), due: nil, now: .distantPast)
        let old = state.takeReady().items
        #expect(old.count == 1)
        _ = state.beginRevocation([p0])
        _ = state.finishRevocation([p0])  // the revocation timeout expired with it still running
        _ = state.assigned([p0], epoch: AssignmentEpoch(2))
        _ = state.offer(record(5, epoch: 2), due: nil, now: .distantPast)  // redelivered from the committed offset
        let fresh = state.takeReady().items
        #expect(fresh.map(\.record.offset) == [5])
        #expect(!state.isCurrent(old[0]) && state.isCurrent(fresh[0]))
        _ = state.complete(old[0], processed: false)  // fenced at delivery: abandoned
        let effects = state.complete(fresh[0], processed: true)
        #expect(effects.stores.map(\.1) == [5])
        #expect(state.inFlight == 0)
    }

    /// A lost assignment fences the records still running: they may not write any more (the
    /// group may have handed the partition to another member already); a handed-over one may.
    @Test func aLostAssignmentFencesItsRunningRecords() {
        for lost in [false, true] {
            var state = RunnerState(maxInFlight: 10, resumeThreshold: 5)
            _ = state.assigned([p0], epoch: AssignmentEpoch(1))
            _ = state.offer(record(5), due: nil, now: .distantPast)
            let running = state.takeReady().items
            _ = state.beginRevocation([p0], lost: lost)
            #expect(state.isCurrent(running[0]) == !lost)
            let effects = state.complete(running[0], processed: !lost)
            #expect(effects.stores.map(\.1) == (lost ? [] : [5]))  // an abandoned record's offset is not stored
        }
    }

    /// An event's records offered together: admitted in order, and only those dropped come back
    /// for the log line, each with its own position (a stale epoch, an offset admitted already).
    @Test func anEventsRecordsAreOfferedTogetherAndTheDroppedOnesNamed() {
        var state = RunnerState(maxInFlight: 10, resumeThreshold: 5)
        _ = state.assigned([p0], epoch: AssignmentEpoch(3))
        let records = [record(5, key: "a", epoch: 3), record(6, key: "b", epoch: 2), record(7, key: "c", epoch: 3),
                       record(5, key: "a", epoch: 3)]
        let offered = state.offer(records, due: { _ in nil }, now: .distantPast)
        #expect(offered.effects.wakeSpawner)
        #expect(offered.notable.map(\.offered) == [RecordPosition(topicPartition: p0, offset: 6),
                                                    RecordPosition(topicPartition: p0, offset: 5)])
        #expect(offered.notable.map(\.staleEpoch) == [AssignmentEpoch(2), nil])
        #expect(offered.notable.map(\.replayedOffset) == [nil, 5])
        #expect(state.takeReady().items.map(\.record.offset) == [5, 7])
        #expect(state.inFlight == 2)
    }

    /// A record fetched under an earlier assignment (handed over late by a source) is dropped, not
    /// admitted into the new one: its partition's owner receives it again from the committed offset.
    @Test func aRecordOfAnEarlierAssignmentIsDropped() {
        var state = RunnerState(maxInFlight: 10, resumeThreshold: 5)
        _ = state.assigned([p0], epoch: AssignmentEpoch(3))
        #expect(state.offer(record(5, epoch: 3), due: nil, now: .distantPast).staleEpoch == nil)
        let stale = state.offer(record(6, key: "other", epoch: 2), due: nil, now: .distantPast)
        #expect(stale.staleEpoch == AssignmentEpoch(2))
        #expect(state.inFlight == 1)
        let first = state.takeReady().items
        #expect(first.map(\.record.offset) == [5])
        #expect(state.isCurrent(first[0]))
        // A later epoch is a new assignment of the partition: the earlier one's record no longer writes.
        _ = state.offer(record(7, key: "third", epoch: 4), due: nil, now: .distantPast)
        let later = state.takeReady().items
        #expect(later.map(\.record.epoch) == [AssignmentEpoch(4)])
        #expect(!state.isCurrent(first[0]) && state.isCurrent(later[0]))
    }
}
