/// Which partitions the runner wants paused versus what it last told the source, with at most
/// one pause/resume exchange in flight (so a late `pause` can never overtake a later `resume`
/// and leave the source stuck).
struct PauseTracker {
    /// A pause/resume exchange the caller must perform.
    struct Change: Sendable, Equatable {
        var pause: [TopicPartition]
        var resume: [TopicPartition]
    }

    private var desired: Set<TopicPartition> = []
    private var applied: Set<TopicPartition> = []
    /// The exchange being performed, if any.
    private var inFlight: Change?
    /// Partitions forgotten while an exchange that pauses them was in flight: the pause may land
    /// before or after they are assigned again, so their state is unknown once it ends.
    private var latePauses: Set<TopicPartition> = []

    /// Whether the source has been told the current wish (no exchange in flight or pending).
    var isSettled: Bool { inFlight == nil && desired == applied }

    /// Sets the wanted paused set. - Returns: an exchange to perform now, if any.
    mutating func set(_ partitions: Set<TopicPartition>) -> Change? {
        desired = partitions
        return start()
    }

    /// Ends the in-flight exchange. - Returns: a follow-up exchange if the wish changed meanwhile.
    mutating func finished() -> Change? {
        inFlight = nil
        // Unknown state: tell the source again (pausing twice and resuming a running partition
        // are both harmless; a stray pause would stall the partition).
        for tp in latePauses {
            if desired.contains(tp) { applied.remove(tp) } else { applied.insert(tp) }
        }
        latePauses = []
        return start()
    }

    /// Forgets revoked partitions (Kafka drops their pause state with the assignment). One that
    /// the in-flight exchange pauses is told its wanted state again once that exchange ends.
    mutating func forget(_ partitions: Set<TopicPartition>) {
        desired.subtract(partitions)
        applied.subtract(partitions)
        if let inFlight { latePauses.formUnion(partitions.intersection(inFlight.pause)) }
    }

    private mutating func start() -> Change? {
        guard inFlight == nil, desired != applied else { return nil }
        let change = Change(pause: desired.subtracting(applied).sorted(), resume: applied.subtracting(desired).sorted())
        applied = desired
        inFlight = change
        return change
    }
}
