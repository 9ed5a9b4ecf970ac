/// When a consumer's poll thread parks the idle partitions of its quiet topics and when it probes
/// them (``KafkaConsumerConfiguration/quietTopics``): they stay parked for an interval, are then
/// unparked for a window long enough to see a fetch response of theirs, and are judged again at
/// its end. A partition judged busy stays unparked until the next judgement.
struct QuietPartitionParking {
    enum Step: Equatable {
        /// Unpark every parked partition, so that the next fetches include them.
        case probe
        /// Park the candidates that have nothing left to fetch.
        case judge
    }

    let interval: Duration
    let window: Duration
    private var next: ContinuousClock.Instant
    private var probing = true

    /// Starts with everything unparked, judged after the first window.
    init(interval: Duration, window: Duration, now: ContinuousClock.Instant) {
        self.interval = interval
        self.window = window
        next = now + window
    }

    /// The step due at `now`, if any; schedules the one after it.
    mutating func step(at now: ContinuousClock.Instant) -> Step? {
        guard now >= next else { return nil }
        probing.toggle()
        next = now + (probing ? window : interval)
        return probing ? .probe : .judge
    }
}
