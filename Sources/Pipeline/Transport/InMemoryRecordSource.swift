import Synchronization

/// The consumer side of ``InMemoryTransport``: one consumer-group member.
///
/// Delivers the group's assignment first, then records round-robin across assigned, unpaused
/// partitions (offset order within each), up to 64 in one event, and rebalance events as the test
/// triggers them. Waiting for records suspends without polling and ends when the iterating task is
/// cancelled.
public struct InMemoryRecordSource: RecordSource {
    let transport: InMemoryTransport
    /// The consumer group this source belongs to.
    public let group: String
    let finishWhenIdle: Bool

    public func events() -> Events {
        Events(source: self)
    }

    public func storeOffsets(_ positions: [RecordPosition]) async -> [TopicPartition: any Error] {
        transport.mutate { state in
            // Taken out while it changes, as in `take()`: reading `groups[group]!` copies the group.
            guard var member = state.groups.removeValue(forKey: group) else { return }
            defer { state.groups[group] = member }
            for position in positions {
                let tp = position.topicPartition
                if let previous = member.stored.updateValue(position.offset, forKey: tp), previous > position.offset {
                    preconditionFailure("offset for \(tp) went backwards: \(previous) -> \(position.offset)")
                }
                member.storedHistory[tp, default: []].append(position.offset)
            }
        }
        return [:]
    }

    public func pause(_ partitions: [TopicPartition]) async throws {
        transport.mutate { state in
            state.groups[group]?.paused.formUnion(partitions)
            state.groups[group]?.pauseCalls += 1
        }
    }

    public func resume(_ partitions: [TopicPartition]) async throws {
        transport.mutate { state in
            state.groups[group]?.paused.subtract(partitions)
        }
    }

    /// The event stream of an ``InMemoryRecordSource``.
    public struct Events: AsyncSequence {
        public typealias Element = SourceEvent
        let source: InMemoryRecordSource

        public func makeAsyncIterator() -> Iterator {
            Iterator(source: source)
        }

        /// Pulls the next event from the transport's state.
        public struct Iterator: AsyncIteratorProtocol {
            let source: InMemoryRecordSource

            public mutating func next() async throws -> SourceEvent? {
                while true {
                    if Task.isCancelled { return nil }
                    switch source.take() {
                    case .event(let event): return event
                    case .finished: return nil
                    case .wait(let version): await source.waitForChange(since: version)
                    }
                }
            }
        }
    }

    /// Records one event carries at most (what a Kafka consumer's buffer might hold at a time).
    static var maxRecordsPerEvent: Int { 64 }

    enum Take {
        case event(SourceEvent)
        case finished
        /// Nothing to deliver as of this state version.
        case wait(version: Int)
    }

    /// Takes the next deliverable event, if any. Taking is not a change other waiters care
    /// about, so it does not bump the transport's version (two idle sources would otherwise wake
    /// each other forever).
    func take() -> Take {
        transport.state.withLock { state -> Take in
            // Taken out of the dictionary while it changes, so its tables stay uniquely referenced
            // (a copy would duplicate them on every record).
            guard var group = state.groups.removeValue(forKey: self.group) else { return .finished }
            defer { state.groups[self.group] = group }
            if !group.started {
                group.started = true
                var partitions: [TopicPartition] = []
                for topic in group.topics {
                    let count = state.partitionCounts[topic] ?? state.defaultPartitionCount
                    for p in 0..<count { partitions.append(TopicPartition(topic: topic, partition: p)) }
                }
                let epoch = group.nextEpoch()
                for tp in partitions { group.assign(tp, epoch: epoch) }
                group.assigned = partitions
                return .event(.assigned(partitions, epoch: epoch))
            }
            if !group.pendingEvents.isEmpty {
                return .event(group.pendingEvents.removeFirst())
            }
            let candidates = group.assigned
            guard !candidates.isEmpty else { return finishWhenIdle ? .finished : .wait(version: state.version) }
            // Round-robin, one record per partition per turn, up to a batch. A partition's log and
            // cursor are each looked up once per record and used in place (a copy of the log
            // retains and releases its records).
            var records: [InboundRecord] = []
            var idleTurns = 0
            let anyPaused = !group.paused.isEmpty
            while records.count < Self.maxRecordsPerEvent, idleTurns < candidates.count {
                let tp = candidates[group.nextPartitionIndex % candidates.count]  // the assignment may have shrunk
                group.nextPartitionIndex = (group.nextPartitionIndex % candidates.count + 1) % candidates.count
                guard !(anyPaused && group.paused.contains(tp)), let log = state.logs.index(forKey: tp),
                      let cursor = group.cursors.index(forKey: tp) else {
                    idleTurns += 1
                    continue
                }
                let start = state.logs.values[log].start
                let position = max(group.cursors.values[cursor].position, start)  // deleted records are skipped
                guard position < state.logs.values[log].end else {
                    idleTurns += 1
                    continue
                }
                idleTurns = 0
                // Reserved at the first record, so a take that finds nothing allocates nothing.
                if records.isEmpty { records.reserveCapacity(Self.maxRecordsPerEvent) }
                group.cursors.values[cursor].position = position + 1
                // Appended, then stamped in place: a local copy to stamp cost a second copy of the record.
                records.append(state.logs.values[log].records[Int(position - start)])
                records[records.count - 1].epoch = group.cursors.values[cursor].epoch
            }
            if !records.isEmpty { return .event(.records(records)) }
            if finishWhenIdle && group.paused.isEmpty { return .finished }
            return .wait(version: state.version)
        }
    }

    /// Suspends until the transport's state changes from `version` or the task is cancelled.
    /// The version comes from the same critical section that found nothing to deliver, so a
    /// change in between cannot be missed.
    func waitForChange(since version: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = transport.state.withLock { state -> Bool in
                    if state.version != version || Task.isCancelled || state.groups[group] == nil { return true }
                    if let previous = state.groups[group]!.sourceWaiter { previous.resume() }
                    state.groups[group]!.sourceWaiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = transport.state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.groups[group]?.sourceWaiter = nil }
                return state.groups[group]?.sourceWaiter
            }
            waiter?.resume()
        }
    }
}
