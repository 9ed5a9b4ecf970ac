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
    private var inFlight = false

    /// Whether the source has been told the current wish (no exchange in flight or pending).
    var isSettled: Bool { !inFlight && desired == applied }

    /// Sets the wanted paused set. - Returns: an exchange to perform now, if any.
    mutating func set(_ partitions: Set<TopicPartition>) -> Change? {
        desired = partitions
        return start()
    }

    /// Ends the in-flight exchange. - Returns: a follow-up exchange if the wish changed meanwhile.
    mutating func finished() -> Change? {
        inFlight = false
        return start()
    }

    /// Forgets revoked partitions (Kafka drops their pause state with the assignment).
    mutating func forget(_ partitions: Set<TopicPartition>) {
        desired.subtract(partitions)
        applied.subtract(partitions)
    }

    private mutating func start() -> Change? {
        guard !inFlight, desired != applied else { return nil }
        let change = Change(pause: desired.subtracting(applied).sorted(), resume: applied.subtracting(desired).sorted())
        applied = desired
        inFlight = true
        return change
    }
}
