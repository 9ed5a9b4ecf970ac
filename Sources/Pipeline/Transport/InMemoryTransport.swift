import Foundation
import Synchronization

/// An in-memory stand-in for a Kafka cluster, for testing runners without a broker
/// (the karafka-testing / swift-jobs `MemoryJobQueue` idea): produce records, run a
/// ``StageRunner`` over ``source(group:topics:)`` and ``sink``, then inspect what was produced
/// and which offsets were stored.
///
/// Semantics kept from Kafka: topics have a fixed number of partitions; a keyed record goes to
/// the partition chosen by a hash of its key (so one key stays in one partition); consumer
/// groups resume from their stored offsets; paused partitions deliver nothing; revocation is a
/// rebalance event the consumer must acknowledge. Failure injection and acknowledgement
/// holding on the sink let tests check that offsets are stored only after delivery.
///
/// Tests synchronise with ``waitUntil(timeout:_:)``, which wakes on every state change
/// (no sleeps).
public final class InMemoryTransport: Sendable {
    struct GroupState {
        var topics: [String]
        var assigned: [TopicPartition] = []
        /// Per assigned partition, the next offset to deliver and the assignment it belongs to:
        /// one entry, so delivering a record looks its partition up once.
        var cursors: [TopicPartition: Cursor] = [:]
        /// The latest assignment.
        var lastEpoch = AssignmentEpoch.initial
        /// Last stored (processed) offset, per partition.
        var stored: [TopicPartition: Int64] = [:]
        var storedHistory: [TopicPartition: [Int64]] = [:]
        var paused: Set<TopicPartition> = []
        var pauseCalls = 0
        var pendingEvents: [SourceEvent] = []
        var nextPartitionIndex = 0
        var started = false
        var finished = false
        var sourceWaiter: CheckedContinuation<Void, Never>?

        /// Numbers a new assignment of this group (one more than the last).
        mutating func nextEpoch() -> AssignmentEpoch {
            lastEpoch = AssignmentEpoch(lastEpoch.rawValue + 1)
            return lastEpoch
        }

        /// Starts delivering `tp` under `epoch` after its stored offset.
        mutating func assign(_ tp: TopicPartition, epoch: AssignmentEpoch) {
            cursors[tp] = Cursor(position: (stored[tp] ?? -1) + 1, epoch: epoch)
        }
    }

    /// Where a group member reads one assigned partition.
    struct Cursor {
        /// The next offset to deliver.
        var position: Int64
        /// The assignment the partition belongs to.
        var epoch: AssignmentEpoch
    }

    /// One partition's records still kept, from `start` (its log start offset: 0 until
    /// ``deleteRecords(in:)`` moves it, as Kafka's retention would).
    struct PartitionLog {
        var start: Int64 = 0
        var records: [InboundRecord] = []

        /// The offset the next record gets.
        var end: Int64 { start + Int64(records.count) }

        /// Appends a record built for the next offset. - Returns: that offset.
        mutating func append(_ record: (Int64) -> InboundRecord) -> Int64 {
            let offset = end
            records.append(record(offset))
            return offset
        }
    }

    struct State {
        var partitionCounts: [String: Int32]
        var defaultPartitionCount: Int32
        var logs: [TopicPartition: PartitionLog] = [:]
        var productionOrder: [RecordPosition] = []
        var groups: [String: GroupState] = [:]
        var sendFailure: (@Sendable ([OutboundRecord]) -> (any Error)?)?
        var holdingAcknowledgements = false
        var heldSends: [Int: CheckedContinuation<Void, any Error>] = [:]
        var sendCount = 0
        var version = 0
        var changeWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterId = 0
    }

    let state: Mutex<State>
    /// Timestamps of produced records (through ``produce(topic:key:value:headers:partition:timestamp:)`` and the sink).
    let clock: @Sendable () -> Date

    /// Creates an empty cluster.
    /// - Parameters:
    ///   - partitions: partition counts of specific topics.
    ///   - defaultPartitionCount: partitions of any other topic (default 1).
    ///   - clock: timestamps of produced records (pass a ``ManualWallClock``'s `now` to keep
    ///     record times and the runner's clock in step).
    public init(partitions: [String: Int32] = [:], defaultPartitionCount: Int32 = 1,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        state = Mutex(State(partitionCounts: partitions, defaultPartitionCount: max(1, defaultPartitionCount)))
        self.clock = clock
    }

    // MARK: producing and reading topics

    /// Appends a record, as a producer would.
    /// - Parameters:
    ///   - partition: explicit partition; otherwise a hash of the key (or partition 0 without key).
    /// - Returns: where the record landed.
    @discardableResult
    public func produce(topic: String, key: [UInt8]?, value: [UInt8], headers: [RecordHeader] = [],
                        partition: Int32? = nil, timestamp: Date? = nil) -> RecordPosition {
        let time = timestamp ?? clock()
        return mutate { state in
            Self.append(&state, topic: topic, key: key, value: value, headers: headers, partition: partition, timestamp: time)
        }
    }

    /// Appends a record with a UTF-8 key and value.
    @discardableResult
    public func produce(topic: String, key: String?, value: String, headers: [RecordHeader] = [],
                        partition: Int32? = nil) -> RecordPosition {
        produce(topic: topic, key: key.map { Array($0.utf8) }, value: Array(value.utf8), headers: headers,
                partition: partition)
    }

    /// Every record `topic` keeps, in the order they were produced (across partitions).
    public func records(in topic: String) -> [InboundRecord] {
        state.withLock { state in
            state.productionOrder.filter { $0.topicPartition.topic == topic }.map { position in
                let log = state.logs[position.topicPartition]!
                return log.records[Int(position.offset - log.start)]
            }
        }
    }

    /// How many records `topic` keeps: what a benchmark checks between passes, without copying
    /// them out as ``records(in:)`` does.
    public func recordCount(in topic: String) -> Int {
        state.withLock { state in
            state.logs.reduce(0) { $1.key.topic == topic ? $0 + $1.value.records.count : $0 }
        }
    }

    /// Every record one partition keeps, in offset order.
    public func records(in topic: String, partition: Int32) -> [InboundRecord] {
        state.withLock { $0.logs[TopicPartition(topic: topic, partition: partition)]?.records ?? [] }
    }

    /// The offset the next record of a partition gets (Kafka's high watermark).
    public func endOffset(of topic: String, partition: Int32) -> Int64 {
        state.withLock { $0.logs[TopicPartition(topic: topic, partition: partition)]?.end ?? 0 }
    }

    /// Deletes every record `topic` holds, as Kafka's `DeleteRecords` up to the high watermark
    /// (or retention) would: offsets go on from where they were, and a consumer positioned before
    /// the new log start resumes at it. The benchmarks drop topics they are done with, so a pass
    /// reuses freed memory as a worker streaming records through does, instead of paying for
    /// fresh pages for everything every earlier pass produced.
    public func deleteRecords(in topic: String) {
        mutate { state in
            var index = state.logs.values.startIndex
            while index != state.logs.values.endIndex {
                if state.logs.keys[index].topic == topic {
                    state.logs.values[index].start = state.logs.values[index].end
                    state.logs.values[index].records = []
                }
                state.logs.values.formIndex(after: &index)
            }
            state.productionOrder.removeAll { $0.topicPartition.topic == topic }
        }
    }

    /// The partition count of `topic`.
    public func partitionCount(of topic: String) -> Int32 {
        state.withLock { $0.partitionCounts[topic] ?? $0.defaultPartitionCount }
    }

    // MARK: consumer groups

    /// A consumer for `group` subscribed to `topics`: the group's only member, replacing any
    /// earlier one (as after a restart). Its first event assigns every partition of those topics;
    /// it resumes each partition after the group's stored offset.
    /// - Parameter finishWhenIdle: end the event stream once nothing is left to deliver (handy
    ///   for "process everything then stop" tests); otherwise it waits for more, like Kafka.
    public func source(group: String, topics: [String], finishWhenIdle: Bool = false) -> InMemoryRecordSource {
        mutate { state in
            var member = GroupState(topics: topics)
            if let previous = state.groups[group] {
                member.stored = previous.stored
                member.storedHistory = previous.storedHistory
                member.pauseCalls = previous.pauseCalls
                previous.sourceWaiter?.resume()
            }
            state.groups[group] = member
        }
        return InMemoryRecordSource(transport: self, group: group, finishWhenIdle: finishWhenIdle)
    }

    /// The last offset `group` stored for a partition (the record at this offset and all before
    /// it are processed); nil if none.
    public func storedOffset(group: String, topic: String, partition: Int32 = 0) -> Int64? {
        state.withLock { $0.groups[group]?.stored[TopicPartition(topic: topic, partition: partition)] }
    }

    /// Every offset `group` stored for a partition, in call order.
    public func storedOffsetHistory(group: String, topic: String, partition: Int32 = 0) -> [Int64] {
        state.withLock { $0.groups[group]?.storedHistory[TopicPartition(topic: topic, partition: partition)] ?? [] }
    }

    /// The partitions `group` currently has paused.
    public func pausedPartitions(group: String) -> Set<TopicPartition> {
        state.withLock { $0.groups[group]?.paused ?? [] }
    }

    /// How many times `group` called pause.
    public func pauseCallCount(group: String) -> Int {
        state.withLock { $0.groups[group]?.pauseCalls ?? 0 }
    }

    /// The partitions currently assigned to `group`.
    public func assignedPartitions(group: String) -> [TopicPartition] {
        state.withLock { $0.groups[group]?.assigned ?? [] }
    }

    /// Revokes partitions from `group` (a rebalance) and returns once the consumer acknowledged.
    /// Nothing more is delivered from them; undelivered and unstored records stay for the next
    /// owner, which resumes after the stored offset. `lost`: as after an expired session.
    public func revoke(group: String, partitions: [TopicPartition], lost: Bool = false) async {
        await withCheckedContinuation { (acknowledged: CheckedContinuation<Void, Never>) in
            let revocation = PartitionRevocation(partitions: partitions, lost: lost) { [self] in
                acknowledged.resume()
                mutate { _ in }
            }
            mutate { state in
                guard state.groups[group] != nil else { return }
                state.groups[group]!.assigned.removeAll { partitions.contains($0) }
                state.groups[group]!.pendingEvents.append(.revoked(revocation))
            }
        }
    }

    /// Assigns partitions to `group` (a rebalance); delivery resumes after the stored offsets.
    public func assign(group: String, partitions: [TopicPartition]) {
        mutate { state in
            guard state.groups[group] != nil else { return }
            let epoch = state.groups[group]!.nextEpoch()
            for tp in partitions where !state.groups[group]!.assigned.contains(tp) {
                state.groups[group]!.assigned.append(tp)
                state.groups[group]!.assign(tp, epoch: epoch)
                state.groups[group]!.paused.remove(tp)
            }
            state.groups[group]!.pendingEvents.append(.assigned(partitions, epoch: epoch))
        }
    }

    // MARK: the sink

    /// A producer writing into this cluster.
    public var sink: InMemoryRecordSink { InMemoryRecordSink(transport: self) }

    /// Makes sends fail: `injector` sees each batch and returns an error to fail it (nothing of
    /// the batch is written) or nil to let it through. Pass nil to stop injecting.
    public func setSendFailure(_ injector: (@Sendable ([OutboundRecord]) -> (any Error)?)?) {
        mutate { $0.sendFailure = injector }
    }

    /// From now on, sends write their records but do not return (are not acknowledged) until
    /// ``releaseAcknowledgements()``.
    public func holdAcknowledgements() {
        mutate { $0.holdingAcknowledgements = true }
    }

    /// Acknowledges every held send and stops holding.
    public func releaseAcknowledgements() {
        let held = mutate { state -> [CheckedContinuation<Void, any Error>] in
            state.holdingAcknowledgements = false
            defer { state.heldSends.removeAll() }
            return Array(state.heldSends.values)
        }
        for continuation in held { continuation.resume() }
    }

    /// Sends waiting for their acknowledgement.
    public var heldSendCount: Int { state.withLock { $0.heldSends.count } }

    /// Successful or held sends so far (batches).
    public var sendCount: Int { state.withLock { $0.sendCount } }

    // MARK: synchronisation

    /// Waits until `condition` holds, re-checking after every change of the cluster's state.
    /// - Returns: whether it held before `timeout` expired.
    public func waitUntil(timeout: Duration = .seconds(10),
                          _ condition: @escaping @Sendable (InMemoryTransport) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let version = state.withLock { $0.version }
            if condition(self) { return true }
            if ContinuousClock.now >= deadline || Task.isCancelled { return false }
            await waitForChange(since: version, deadline: deadline)
        }
    }

    private func waitForChange(since version: Int, deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.changeSignal(since: version) }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }

    private func changeSignal(since version: Int) async {
        let id = state.withLock { state -> Int in
            state.nextWaiterId += 1
            return state.nextWaiterId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.version != version || Task.isCancelled { return true }
                    state.changeWaiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.changeWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    // MARK: internals shared with the source and sink

    /// Applies a mutation, bumps the version and wakes every waiter (outside the lock).
    @discardableResult
    func mutate<T>(_ body: (inout State) -> T) -> T {
        var wake: [CheckedContinuation<Void, Never>] = []
        let result = state.withLock { state -> T in
            let result = body(&state)
            state.version += 1
            wake.append(contentsOf: state.changeWaiters.values)
            state.changeWaiters.removeAll()
            // Through the values in place: reading `groups[name]!` would copy a group's tables.
            var index = state.groups.values.startIndex
            while index != state.groups.values.endIndex {
                if let waiter = state.groups.values[index].sourceWaiter {
                    wake.append(waiter)
                    state.groups.values[index].sourceWaiter = nil
                }
                state.groups.values.formIndex(after: &index)
            }
            return result
        }
        for continuation in wake { continuation.resume() }
        return result
    }

    static func append(_ state: inout State, topic: String, key: [UInt8]?, value: [UInt8], headers: [RecordHeader],
                       partition: Int32?, timestamp: Date) -> RecordPosition {
        append(&state, topic: topic, partitionCount: state.partitionCounts[topic] ?? state.defaultPartitionCount,
               key: key, value: value, headers: headers, partition: partition, timestamp: timestamp)
    }

    /// ``append(_:topic:key:value:headers:partition:timestamp:)`` with the topic's partition count
    /// looked up already (a send looks it up once per topic). The partition's log is reached once.
    static func append(_ state: inout State, topic: String, partitionCount: Int32, key: [UInt8]?, value: [UInt8],
                       headers: [RecordHeader], partition: Int32?, timestamp: Date) -> RecordPosition {
        let chosen = partition ?? key.map { Int32(truncatingIfNeeded: fnv1a($0) % UInt64(partitionCount)) } ?? 0
        let tp = TopicPartition(topic: topic, partition: chosen)
        let offset = state.logs[tp, default: PartitionLog()].append { offset in
            InboundRecord(topic: topic, partition: chosen, offset: offset, key: key, value: value, headers: headers,
                          timestamp: timestamp)
        }
        let position = RecordPosition(topicPartition: tp, offset: offset)
        state.productionOrder.append(position)
        return position
    }

    private static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
