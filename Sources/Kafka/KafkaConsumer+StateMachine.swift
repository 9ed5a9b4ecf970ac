import Dispatch

extension KafkaConsumer {
    /// What a waiting `next()` receives.
    enum NextResult: Sendable {
        case message(KafkaConsumerMessage)
        case finished
        case failed(KafkaError)
    }

    typealias Waiter = UnsafeContinuation<NextResult, Never>

    /// Waiters to resume once the lock is released.
    struct Wakeups {
        var waiters: [(Waiter, NextResult)] = []
        /// Whether the poll thread must re-evaluate pauses now instead of after its poll timeout.
        var wakePollThread = false
        /// Partitions whose fetching skipped offsets: the poll thread seeks them back here.
        var seeks: [KafkaTopicPartitionOffset] = []
        /// Backpressure just engaged: the poll thread should move what librdkafka already has
        /// queued locally into the buffer before pausing (pausing would discard it, to be fetched
        /// again after the resume).
        var backpressureEngaged = false

        func run(wakingWith wake: () -> Void) {
            for (waiter, result) in waiters { waiter.resume(returning: result) }
            if wakePollThread { wake() }
        }
    }

    /// The consumer's state, guarded by one `Mutex`. Every transition is a mutating method that
    /// returns the side effects to perform; the caller performs them after releasing the lock.
    ///
    /// Pausing has two independent sources: the application (``KafkaConsumer/pause(_:)``) and
    /// backpressure (more than `maxBuffered` messages waiting). librdkafka's pause state is only
    /// ever changed by the poll thread, which reconciles the union of both against what it
    /// applied last (``reconcilePauses()``), so the two never fight and calls never reorder.
    struct StateMachine {
        enum Lifecycle {
            case running
            case closing
            case closed
        }

        private(set) var lifecycle = Lifecycle.running
        private let maxBuffered: Int
        private let resumeBelow: Int

        /// Deliverable messages, in arrival order.
        private var buffer = FIFOBuffer<KafkaConsumerMessage>()
        /// Messages of user-paused partitions, held back until ``resume(_:)``.
        private var held: [KafkaTopicPartition: [KafkaConsumerMessage]] = [:]
        private var waiters: [(id: UInt64, continuation: Waiter)] = []
        private var cancelledWaiters: Set<UInt64> = []
        private var nextWaiterID: UInt64 = 0
        private var fatal: KafkaError?

        // The inputs of ``reconcilePauses()`` mark it due when they change: it runs on every pass
        // of the poll loop, and set algebra over every assigned partition (a worker's input and its
        // retry tiers: 160) on each pass cost a light worker about 3% of its CPU.
        private(set) var assigned: Set<KafkaTopicPartition> = [] { didSet { pausesDue = true } }
        /// Revoked but not yet unassigned: no new messages, but offsets may still be stored.
        private var revoking: Set<KafkaTopicPartition> = [] { didSet { pausesDue = true } }
        private var userPaused: Set<KafkaTopicPartition> = [] { didSet { pausesDue = true } }
        private(set) var isBackpressurePaused = false { didSet { pausesDue = true } }
        /// What librdkafka currently has paused (changed only by the poll thread).
        private var appliedPaused: Set<KafkaTopicPartition> = [] { didSet { pausesDue = true } }
        /// Whether an input of ``reconcilePauses()`` changed since it last ran.
        private var pausesDue = false
        /// The current assignment's number per assigned partition (stamped on its messages).
        private(set) var generations: [KafkaTopicPartition: UInt64] = [:]
        private var nextGeneration: UInt64 = 1
        /// Topics whose idle partitions are parked (``KafkaConsumerConfiguration/quietTopics``).
        private let quietTopics: Set<String>
        /// Partitions of quiet topics paused in librdkafka while they have nothing to fetch.
        private(set) var parked: Set<KafkaTopicPartition> = [] { didSet { pausesDue = true } }
        /// How often backpressure engaged (for tests and metrics).
        private(set) var backpressurePauseCount = 0

        /// Per partition of the current assignment, the offset the next polled message must have
        /// (see ``FetchPosition``).
        private var positions: [KafkaTopicPartition: FetchPosition] = [:]
        /// How often fetching skipped offsets and was sent back (for tests; each is also logged).
        private(set) var skipsRepaired = 0

        /// Highest offset handed out per partition, and highest `offset + 1` stored.
        private var delivered: [KafkaTopicPartition: Int64] = [:]
        private var stored: [KafkaTopicPartition: Int64] = [:]
        private var drainWaiters: [(id: UInt64, partitions: [KafkaTopicPartition], signal: DispatchSemaphore)] = []
        private var closeWaiters: [UnsafeContinuation<Void, Never>] = []

        init(maxBuffered: Int, quietTopics: Set<String> = []) {
            self.maxBuffered = maxBuffered
            self.resumeBelow = max(maxBuffered / 2, 1)
            self.quietTopics = quietTopics
        }

        // MARK: Messages

        /// The poll thread fetched `messages`: hand them to waiters or buffer them.
        mutating func messagesPolled(_ messages: [KafkaConsumerMessage]) -> Wakeups {
            var wakeups = Wakeups()
            guard lifecycle == .running else { return wakeups }
            for var message in messages {
                let partition = message.topicPartition
                guard assigned.contains(partition), !revoking.contains(partition) else { continue }
                switch positions[partition, default: FetchPosition()].accept(message.offset) {
                case .accept:
                    break
                case .drop:
                    continue
                case .seek(let offset):
                    skipsRepaired += 1
                    wakeups.seeks.append(KafkaTopicPartitionOffset(partition, offset: offset))
                    continue
                }
                message.assignmentGeneration = generations[partition] ?? 0
                if userPaused.contains(partition) {
                    held[partition, default: []].append(message)
                } else if !waiters.isEmpty {
                    let waiter = waiters.removeFirst()
                    delivered[partition] = message.offset
                    wakeups.waiters.append((waiter.continuation, .message(message)))
                } else {
                    buffer.append(message)
                }
            }
            if buffer.count > maxBuffered && !isBackpressurePaused {
                isBackpressurePaused = true
                backpressurePauseCount += 1
                wakeups.backpressureEngaged = true
            }
            return wakeups
        }

        enum NextAction {
            case deliver(KafkaConsumerMessage, wakePollThread: Bool)
            case finish
            case fail(KafkaError)
            case suspended
        }

        /// The application asks for the next message. With a `waiter`, an empty buffer
        /// registers it; without one, an empty buffer returns `.suspended` (the fast path).
        mutating func next(waiter: (id: UInt64, continuation: Waiter)?) -> NextAction {
            if let message = buffer.popFirst() {
                delivered[message.topicPartition] = message.offset
                return .deliver(message, wakePollThread: releaseBackpressureIfDrained())
            }
            if let fatal { return .fail(fatal) }
            guard lifecycle == .running else { return .finish }
            guard let waiter else { return .suspended }
            if cancelledWaiters.remove(waiter.id) != nil { return .finish }
            waiters.append(waiter)
            return .suspended
        }

        /// Takes up to `max` buffered messages at once (none waits). - Returns: them, and whether
        /// taking them released backpressure (the poll thread must be woken to resume fetching).
        mutating func takeBuffered(max: Int) -> (messages: [KafkaConsumerMessage], wakePollThread: Bool) {
            guard !buffer.isEmpty, max > 0 else { return ([], false) }
            var messages: [KafkaConsumerMessage] = []
            messages.reserveCapacity(Swift.min(max, buffer.count))
            while messages.count < max, let message = buffer.popFirst() {
                delivered[message.topicPartition] = message.offset
                messages.append(message)
            }
            return (messages, releaseBackpressureIfDrained())
        }

        /// A fresh id for a waiting `next()`, so cancellation can find it.
        mutating func makeWaiterID() -> UInt64 {
            nextWaiterID += 1
            return nextWaiterID
        }

        /// The waiting task was cancelled: returns its continuation to finish, if registered.
        mutating func cancelWaiter(_ id: UInt64) -> Waiter? {
            if let index = waiters.firstIndex(where: { $0.id == id }) {
                return waiters.remove(at: index).continuation
            }
            cancelledWaiters.insert(id)
            // An id whose waiter was already resumed never registers; keep the set bounded.
            if cancelledWaiters.count > 256 { cancelledWaiters = cancelledWaiters.filter { $0 + 256 > nextWaiterID } }
            return nil
        }

        /// A fatal error ends the message sequence once the buffer is drained.
        mutating func recordFatal(_ error: KafkaError) -> Wakeups {
            if fatal == nil { fatal = error }
            var wakeups = Wakeups()
            if buffer.isEmpty {
                wakeups.waiters = waiters.map { ($0.continuation, .failed(error)) }
                waiters = []
            }
            return wakeups
        }

        // MARK: Pause and resume

        /// The application pauses `partitions`: their buffered messages are held back at once.
        mutating func pause(_ partitions: [KafkaTopicPartition]) -> Result<Wakeups, KafkaError> {
            if let missing = partitions.first(where: { !assigned.contains($0) }) {
                return .failure(Self.notAssigned(missing, action: "pause"))
            }
            let newlyPaused = Set(partitions).subtracting(userPaused)
            userPaused.formUnion(newlyPaused)
            let moved = buffer.removeAll { newlyPaused.contains($0.topicPartition) }
            for message in moved { held[message.topicPartition, default: []].append(message) }
            releaseBackpressureIfDrained()
            var wakeups = Wakeups()
            wakeups.wakePollThread = true
            return .success(wakeups)
        }

        /// The application resumes `partitions`: held messages become deliverable again.
        mutating func resume(_ partitions: [KafkaTopicPartition]) -> Result<Wakeups, KafkaError> {
            if let missing = partitions.first(where: { !assigned.contains($0) }) {
                return .failure(Self.notAssigned(missing, action: "resume"))
            }
            var wakeups = Wakeups()
            wakeups.wakePollThread = true
            for partition in partitions where userPaused.remove(partition) != nil {
                for message in held.removeValue(forKey: partition) ?? [] {
                    if !waiters.isEmpty {
                        delivered[partition] = message.offset
                        wakeups.waiters.append((waiters.removeFirst().continuation, .message(message)))
                    } else {
                        buffer.append(message)
                    }
                }
            }
            return .success(wakeups)
        }

        /// Ends backpressure once the buffer is below the resume mark, whatever emptied it: the
        /// application taking messages, or a pause or revocation removing them. When only delivery
        /// checked it, a buffer emptied by a revocation kept every later partition paused for good
        /// (nothing more could arrive to be taken). - Returns: whether it ended now.
        @discardableResult
        private mutating func releaseBackpressureIfDrained() -> Bool {
            guard isBackpressurePaused, buffer.count < resumeBelow else { return false }
            isBackpressurePaused = false
            return true
        }

        // MARK: Parking

        /// Partitions of quiet topics that could be parked now (assigned, not paused or holding
        /// messages for the application, no seek pending), each with the offset its next message
        /// must have (nil when not known yet).
        func parkingCandidates() -> [(partition: KafkaTopicPartition, next: Int64?)] {
            guard !quietTopics.isEmpty else { return [] }
            return assigned.compactMap { partition in
                guard quietTopics.contains(partition.topic), !parked.contains(partition), !revoking.contains(partition),
                      !userPaused.contains(partition), positions[partition]?.awaitsSeek != true else { return nil }
                return (partition, positions[partition]?.next)
            }
        }

        /// Parks idle partitions: the next ``reconcilePauses()`` pauses them.
        mutating func park(_ partitions: [KafkaTopicPartition]) {
            for partition in partitions where assigned.contains(partition) && !revoking.contains(partition) {
                parked.insert(partition)
            }
        }

        /// Unparks every parked partition for a probe: the next ``reconcilePauses()`` resumes them.
        mutating func unparkAll() {
            parked = []
        }

        /// Poll thread only: what to pause and resume in librdkafka so that it matches the
        /// union of user pauses, backpressure and parking.
        mutating func reconcilePauses() -> (pause: [KafkaTopicPartition], resume: [KafkaTopicPartition]) {
            guard pausesDue else { return ([], []) }
            defer { pausesDue = false }
            let active = assigned.subtracting(revoking)
            var desired = isBackpressurePaused ? active : userPaused.intersection(active)
            if !parked.isEmpty { desired.formUnion(parked.intersection(active)) }
            appliedPaused.formIntersection(active)
            let toPause = desired.subtracting(appliedPaused)
            let toResume = appliedPaused.subtracting(desired)
            appliedPaused = desired
            return (toPause.sorted(), toResume.sorted())
        }

        // MARK: Rebalance

        /// Partitions were assigned; `starts` are the offsets fetching begins at, where known
        /// (the group's committed offsets), so that a first message past them counts as a skip.
        /// - Returns: the assignment's generation, one for all of `partitions` (see
        ///   ``KafkaConsumerMessage/assignmentGeneration``).
        @discardableResult
        mutating func didAssign(_ partitions: [KafkaTopicPartition], starts: [KafkaTopicPartition: Int64] = [:]) -> UInt64 {
            let generation = nextGeneration
            nextGeneration += 1
            for partition in partitions {
                positions[partition] = FetchPosition(next: starts[partition])
                generations[partition] = generation
                assigned.insert(partition)
                revoking.remove(partition)
                parked.remove(partition)
                delivered[partition] = nil
                stored[partition] = nil
            }
            return generation
        }

        /// Before the revoke hook: stop handing out messages of `partitions`.
        /// - Returns: those of them paused in librdkafka; the caller resumes them before unassign
        ///   (librdkafka would otherwise keep them paused into a later assignment) and they are no
        ///   longer counted as applied.
        mutating func willRevoke(_ partitions: [KafkaTopicPartition]) -> [KafkaTopicPartition] {
            let leaving = Set(partitions).intersection(assigned)
            revoking.formUnion(leaving)
            parked.subtract(leaving)
            _ = buffer.removeAll { leaving.contains($0.topicPartition) }
            releaseBackpressureIfDrained()
            for partition in leaving { held[partition] = nil }
            let paused = appliedPaused.intersection(leaving)
            appliedPaused.subtract(paused)
            return paused.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        }

        /// The poll thread performed the seeks a ``Wakeups`` asked for: messages of those
        /// partitions polled from now on come from the new position.
        mutating func didSeek(_ seeks: [KafkaTopicPartitionOffset]) {
            for seek in seeks { positions[seek.topicPartition]?.seekPerformed() }
        }

        /// The seeks could not be performed: they are asked for again by the next message polled.
        mutating func seekFailed(_ seeks: [KafkaTopicPartitionOffset]) {
            for seek in seeks { positions[seek.topicPartition]?.seekFailed() }
        }

        /// After unassign: forget `partitions` entirely.
        mutating func didRevoke(_ partitions: [KafkaTopicPartition]) -> [DispatchSemaphore] {
            for partition in partitions {
                positions[partition] = nil
                generations[partition] = nil
                assigned.remove(partition)
                revoking.remove(partition)
                userPaused.remove(partition)
                parked.remove(partition)
                appliedPaused.remove(partition)
                held[partition] = nil
                delivered[partition] = nil
                stored[partition] = nil
            }
            _ = buffer.removeAll { !assigned.contains($0.topicPartition) }
            releaseBackpressureIfDrained()
            return takeSatisfiedDrainWaiters()
        }

        // MARK: Offsets

        /// Checks that an offset for `partition` may be stored.
        func checkCanStore(_ partition: KafkaTopicPartition) -> KafkaError? {
            if lifecycle == .closed { return .clientClosed("KafkaConsumer") }
            return assigned.contains(partition) ? nil : Self.notAssigned(partition, action: "store an offset for")
        }

        /// An offset was stored: returns drain waiters whose partitions are now settled.
        mutating func didStore(_ partition: KafkaTopicPartition, nextOffset: Int64) -> [DispatchSemaphore] {
            guard assigned.contains(partition) else { return [] }
            stored[partition] = max(stored[partition] ?? nextOffset, nextOffset)
            return drainWaiters.isEmpty ? [] : takeSatisfiedDrainWaiters()
        }

        /// Registers a drain waiter, or returns `nil` if `partitions` are already settled.
        mutating func addDrainWaiter(_ partitions: [KafkaTopicPartition], signal: DispatchSemaphore) -> UInt64? {
            if isSettled(partitions) { return nil }
            let id = makeWaiterID()
            drainWaiters.append((id, partitions, signal))
            return id
        }

        mutating func removeDrainWaiter(_ id: UInt64) {
            drainWaiters.removeAll { $0.id == id }
        }

        /// Whether every message handed out for `partitions` has had its offset stored.
        func isSettled(_ partitions: [KafkaTopicPartition]) -> Bool {
            partitions.allSatisfy { partition in
                guard assigned.contains(partition), let last = delivered[partition] else { return true }
                return (stored[partition] ?? Int64.min) > last
            }
        }

        private mutating func takeSatisfiedDrainWaiters() -> [DispatchSemaphore] {
            var signals: [DispatchSemaphore] = []
            var remaining = drainWaiters
            remaining.removeAll { waiter in
                guard isSettled(waiter.partitions) else { return false }
                signals.append(waiter.signal)
                return true
            }
            drainWaiters = remaining
            return signals
        }

        // MARK: Close

        /// Starts closing: buffered messages are dropped (they were never handed out, so their
        /// offsets are not stored and they will be redelivered) and waiting `next()` calls finish.
        mutating func requestClose() -> Wakeups {
            var wakeups = Wakeups()
            guard lifecycle == .running else { return wakeups }
            lifecycle = .closing
            buffer.removeAll()
            held = [:]
            wakeups.waiters = waiters.map { ($0.continuation, .finished) }
            waiters = []
            wakeups.wakePollThread = true
            return wakeups
        }

        /// Registers a `close()` caller; returns `false` if the consumer is already closed.
        mutating func addCloseWaiter(_ continuation: UnsafeContinuation<Void, Never>) -> Bool {
            guard lifecycle != .closed else { return false }
            closeWaiters.append(continuation)
            return true
        }

        /// The poll thread finished closing.
        mutating func closed() -> [UnsafeContinuation<Void, Never>] {
            lifecycle = .closed
            assigned = []
            revoking = []
            defer { closeWaiters = [] }
            return closeWaiters
        }

        private static func notAssigned(_ partition: KafkaTopicPartition, action: String) -> KafkaError {
            KafkaError(
                code: .partitionNotAssigned,
                message: "cannot \(action) \(partition): the partition is not assigned to this consumer (it may have been revoked)",
                isRetriable: false)
        }
    }
}
