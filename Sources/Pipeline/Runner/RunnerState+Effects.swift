import Foundation

extension RunnerState {
    /// Side effects of a transition.
    struct Effects {
        /// Offsets to store: partition, offset, and the assignment they belong to.
        var stores: [(TopicPartition, Int64, AssignmentEpoch)] = []
        var pauseChange: PauseTracker.Change?
        var wakeSpawner = false
        /// The next record of the finished record's chain, to run on the same worker.
        var next: WorkItem?
        /// When the record the delay gate started holding (its partition paused) becomes due; the
        /// partition is ``offered``'s (for logging).
        var heldUntil: Date?
        /// Records the delay gate released (admitted now).
        var released = 0
        /// The record offered was held until its partition is prepared.
        var heldUnprepared = false
        /// Held records a finished preparation released.
        var releasedUnprepared = 0
        /// The offered record's offset was already admitted in this assignment: it was dropped.
        var replayedOffset: Int64?
        /// The offered record was fetched under an earlier assignment of its partition: dropped.
        var staleEpoch: AssignmentEpoch?
        /// Where the offered record was, when it was dropped or held by a gate (for the log line).
        var offered: RecordPosition?
        /// Preparation batches to start (hook calls).
        var prepare: [ReadinessGate.Batch] = []
        /// Preparation batches to cancel (and wait for) before anything else of this transition.
        var cancelPreparations: [Int] = []

        /// Adds another transition's effects (stores, spawning, preparations; the later pause
        /// change wins, since it reflects the newer wish).
        mutating func merge(_ other: Effects) {
            stores += other.stores
            pauseChange = other.pauseChange ?? pauseChange
            wakeSpawner = wakeSpawner || other.wakeSpawner
            released += other.released
            prepare += other.prepare
            cancelPreparations += other.cancelPreparations
        }
    }
}
