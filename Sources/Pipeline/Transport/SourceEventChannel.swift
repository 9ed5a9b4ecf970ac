import Synchronization

/// The bounded, ordered hand-off between a source's producers (a Kafka consumer's message task and
/// its rebalance hooks) and the one runner that iterates it.
///
/// Why not an `AsyncStream`: its buffer is unbounded or drops elements. Unbounded, a task copying
/// messages from the consumer into it drains the consumer's own buffer as fast as librdkafka fills
/// it, so the consumer's backpressure never engages and everything librdkafka prefetched piles up
/// in front of the runner (the chaos run measured a verify worker with three times its in-flight
/// bound admitted). Here ``send(_:if:)`` suspends while `capacity` records wait, so the consumer's
/// buffer fills and pauses fetching instead.
///
/// Control events (``SourceEvent/assigned(_:)``, ``SourceEvent/revoked(_:)``) never wait: they
/// come from librdkafka's poll thread, which must not block on the runner, and they are few.
/// Everything is delivered in the order it was enqueued; the records queued one after the other
/// are handed over as one ``SourceEvent/records(_:)``.
public final class SourceEventChannel: AsyncSequence, Sendable {
    public typealias Element = SourceEvent

    private enum Entry {
        case record(InboundRecord)
        case control(SourceEvent)
    }

    private struct State {
        var queue: [Entry] = []
        var head = 0
        var records = 0
        var finished = false
        var receiver: CheckedContinuation<SourceEvent?, Never>?
        /// Senders waiting for room, with the record each holds: resumed with true to try again,
        /// false when ``refuseWaiting(_:)`` refused their record.
        var senders: [(record: InboundRecord, continuation: CheckedContinuation<Bool, Never>)] = []
        var onTermination: (@Sendable () -> Void)?
    }

    /// Records that may wait in the channel before ``send(_:if:)`` suspends.
    public let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: records buffered before senders wait (at least 1).
    public init(capacity: Int) {
        self.capacity = Swift.max(1, capacity)
    }

    /// Called once when the channel finishes or its iterator is cancelled: where the source stops
    /// the tasks that feed it.
    public func onTermination(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onTermination = handler }
    }

    /// Enqueues a record, waiting while the channel is full. `admit` runs under the channel's lock
    /// right before the record is enqueued, so a decision such as "is this partition still owned"
    /// is atomic with the record's place in the order.
    /// - Returns: false when the record was not enqueued (refused by `admit`, or the channel finished).
    @discardableResult
    public func send(_ record: InboundRecord, if admit: @Sendable () -> Bool = { true }) async -> Bool {
        while true {
            enum Step { case done(Bool), wait }
            let step: Step = state.withLock { state in
                if state.finished { return .done(false) }
                guard state.records >= capacity else {
                    guard admit() else { return .done(false) }
                    Self.enqueue(.record(record), &state)
                    return .done(true)
                }
                return .wait
            }
            switch step {
            case .done(let enqueued): return enqueued
            case .wait:
                if await !waitForRoom(holding: record) { return false }
            }
        }
    }

    /// Sends `records` in order, as ``send(_:if:)`` would one after the other, but taking the lock
    /// once for as many as there is room for, so a waiting receiver gets them as one event (a
    /// runner woken by each record alone runs batches of one). `admit` is asked under the
    /// channel's lock which of the records that fit may go in; the others are dropped. While the
    /// channel is full the sender waits like ``send(_:if:)``, holding its next record; refused by
    /// ``refuseWaiting(_:)``, it asks `admit` again about that record and those after it.
    /// - Returns: how many records were enqueued.
    @discardableResult
    public func send(contentsOf records: [InboundRecord],
                     admitting admit: @Sendable ([InboundRecord]) -> [InboundRecord] = { $0 }) async -> Int {
        var next = 0, enqueued = 0
        while next < records.count {
            enum Step { case finished, progressed, full }
            let step: Step = state.withLock { state in
                if state.finished { return .finished }
                let room = capacity - state.records
                guard room > 0 else { return .full }
                let end = Swift.min(records.count, next + room)
                let admitted = admit(Array(records[next..<end]))
                next = end
                enqueued += admitted.count
                Self.enqueue(records: admitted, &state)
                return .progressed
            }
            switch step {
            case .finished: return enqueued
            case .progressed: continue
            case .full:
                _ = await waitForRoom(holding: records[next])
            }
        }
        return enqueued
    }

    /// Waits while the channel is full, as a sender holding `record`. - Returns: true once there
    /// is room or the channel finished (the caller looks again), false when ``refuseWaiting(_:)``
    /// refused `record`.
    private func waitForRoom(holding record: InboundRecord) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let resumeNow = state.withLock { state in
                if state.finished || state.records < capacity { return true }
                state.senders.append((record, continuation))
                return false
            }
            if resumeNow { continuation.resume(returning: true) }
        }
    }

    /// Senders currently waiting for room (for tests and diagnostics).
    public var waitingSenderCount: Int { state.withLock { $0.senders.count } }

    /// Whether the receiver waits for an event on an empty channel (for tests and diagnostics).
    public var receiverIsWaiting: Bool { state.withLock { $0.receiver != nil } }

    /// Refuses, at once, the records of waiting senders that `shouldRefuse` picks: their `send`
    /// returns false. A source calls this when partitions are revoked, so a record fetched under
    /// the old assignment and still waiting for room cannot slip in after the partition is
    /// assigned again (it would precede the re-fetched, older offsets the group committed).
    public func refuseWaiting(_ shouldRefuse: (InboundRecord) -> Bool) {
        let refused: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            var refused: [CheckedContinuation<Bool, Never>] = []
            state.senders.removeAll { sender in
                guard shouldRefuse(sender.record) else { return false }
                refused.append(sender.continuation)
                return true
            }
            return refused
        }
        for continuation in refused { continuation.resume(returning: false) }
    }

    /// Enqueues a control event at once, whatever the number of waiting records.
    public func yieldControl(_ event: SourceEvent) {
        state.withLock { state in
            guard !state.finished else { return }
            Self.enqueue(.control(event), &state)
        }
    }

    /// Ends the channel: the receiver gets what is queued, then nil; waiting senders return false.
    public func finish() {
        terminate(dropQueued: false)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: self)
    }

    /// Iterates the channel; ends with nil when it finished or the iterating task is cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: SourceEventChannel

        public mutating func next() async -> SourceEvent? {
            await channel.receive()
        }
    }

    // MARK: internals

    private func receive() async -> SourceEvent? {
        // Under load an event is nearly always queued: take it without a continuation and a
        // cancellation handler (two allocations and a status record per record otherwise).
        let (queued, senders) = state.withLock { state -> (SourceEvent?, [CheckedContinuation<Bool, Never>]) in
            guard let event = Self.dequeue(&state) else { return (nil, []) }
            return (event, Self.takeSendersIfRoom(&state, capacity: capacity))
        }
        if let queued {
            for sender in senders { sender.resume(returning: true) }
            return queued
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SourceEvent?, Never>) in
                let (event, ready, senders) = state.withLock { state -> (SourceEvent?, Bool, [CheckedContinuation<Bool, Never>]) in
                    if let event = Self.dequeue(&state) {
                        return (event, true, Self.takeSendersIfRoom(&state, capacity: capacity))
                    }
                    if state.finished || Task.isCancelled { return (nil, true, []) }
                    state.receiver = continuation
                    return (nil, false, [])
                }
                for sender in senders { sender.resume(returning: true) }
                if ready { continuation.resume(returning: event) }
            }
        } onCancel: {
            terminate(dropQueued: true)
        }
    }

    /// Finishes the channel; on cancellation the queue is dropped too (the runner stopped reading,
    /// and the records' offsets were never stored, so they are redelivered).
    private func terminate(dropQueued: Bool) {
        let (receiver, senders, handler) = state.withLock { state in
            let first = !state.finished
            state.finished = true
            if dropQueued {
                state.queue.removeAll()
                state.head = 0
                state.records = 0
            }
            let receiver = state.head == state.queue.count ? state.receiver : nil
            if receiver != nil { state.receiver = nil }
            let senders = state.senders
            state.senders.removeAll()
            let handler = first ? state.onTermination : nil
            if first { state.onTermination = nil }
            return (receiver, senders, handler)
        }
        receiver?.resume(returning: nil)
        for sender in senders { sender.continuation.resume(returning: false) }
        handler?()
    }

    private static func enqueue(_ entry: Entry, _ state: inout State) {
        if let receiver = state.receiver {
            // The receiver waits only on an empty queue: hand the event over directly.
            state.receiver = nil
            switch entry {
            case .record(let record): receiver.resume(returning: .records([record]))
            case .control(let event): receiver.resume(returning: event)
            }
            return
        }
        if case .record = entry { state.records += 1 }
        state.queue.append(entry)
    }

    /// Enqueues records sent together, or hands them to a waiting receiver as one event.
    private static func enqueue(records: [InboundRecord], _ state: inout State) {
        guard !records.isEmpty else { return }
        if let receiver = state.receiver {
            state.receiver = nil
            receiver.resume(returning: .records(records))
            return
        }
        state.records += records.count
        state.queue.reserveCapacity(state.queue.count + records.count)
        for record in records { state.queue.append(.record(record)) }
    }

    /// The next control event, or every record queued before the next control event.
    private static func dequeue(_ state: inout State) -> SourceEvent? {
        guard state.head < state.queue.count else { return nil }
        let event: SourceEvent
        switch state.queue[state.head] {
        case .control(let control):
            event = control
            state.head += 1
        case .record:
            var records: [InboundRecord] = []
            records.reserveCapacity(state.records)
            while state.head < state.queue.count, case .record(let record) = state.queue[state.head] {
                records.append(record)
                state.head += 1
            }
            state.records -= records.count
            event = .records(records)
        }
        if state.head == state.queue.count {
            state.queue.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head >= 1024, state.head * 2 >= state.queue.count {
            state.queue.removeFirst(state.head)
            state.head = 0
        }
        return event
    }

    private static func takeSendersIfRoom(_ state: inout State, capacity: Int) -> [CheckedContinuation<Bool, Never>] {
        guard state.records < capacity, !state.senders.isEmpty else { return [] }
        let senders = state.senders.map(\.continuation)
        state.senders.removeAll()
        return senders
    }
}
