import Synchronization

/// Keyed state per partition with tentative updates: the machinery fulfil's purchase ledger and
/// the owner view share (``KeyedStateStore``).
///
/// An update under a ``DeliveryScope`` is *pending* until the scope settles: delivered, it is
/// applied; not delivered (retry, timeout, shutdown, rejection), it is withdrawn. While a key has
/// a pending update, a second update of that key waits for it (after letting the runner send what
/// its batch holds back: ``DeliveryScope/beforeWaiting()``), so each update sees every
/// acknowledged one before it. A partition is installed for an assignment (``AssignmentEpoch``):
/// an update under the scope of a record of an earlier assignment is refused, and a scope settles
/// only the pending update it made itself, so scopes of a partition's earlier installation settle
/// into nothing.
final class StatePartitions<Value: Sendable>: Sendable {
    private struct Partition {
        var values: [String: Value]
        /// The assignment the values were installed for.
        let epoch: AssignmentEpoch
        /// Pending updates, and the scope that made each.
        var pending: [String: (value: Value, scope: ObjectIdentifier)] = [:]
        /// Insertion order of keys, for the capacity bound (only kept with a capacity).
        var order: [String] = []
        var head = 0
    }

    private struct Waiter {
        let partition: Int32
        let key: String
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var partitions: [Int32: Partition] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private enum Step<R: Sendable>: Sendable {
        case answer(R)
        case pending(R)
        case wait
        case notReady
        case stale(AssignmentEpoch)
    }

    private let state = Mutex(State())
    /// Keys kept per partition before the oldest are forgotten (nil: unbounded).
    private let capacity: Int?

    init(capacity: Int? = nil) {
        self.capacity = capacity.map { max(1, $0) }
    }

    /// Installs (or replaces) a partition's values for an assignment; pending updates made before are void.
    func install(_ partition: Int32, values: [String: Value], epoch: AssignmentEpoch = .initial) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.partitions[partition] = Partition(values: values, epoch: epoch)
            return Self.takeWaiters(&state) { $0.partition == partition }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Installs a partition's values unless it is installed (whose pending updates must survive).
    func installIfAbsent(_ partition: Int32, values: [String: Value], epoch: AssignmentEpoch) {
        state.withLock { state in
            guard state.partitions[partition] == nil else { return }
            state.partitions[partition] = Partition(values: values, epoch: epoch)
        }
    }

    /// Forgets a partition; updates waiting on it then fail as not ready.
    func remove(_ partition: Int32) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.partitions[partition] = nil
            return Self.takeWaiters(&state) { $0.partition == partition }
        }
        for continuation in woken { continuation.resume() }
    }

    func isInstalled(_ partition: Int32) -> Bool { state.withLock { $0.partitions[partition] != nil } }

    var installed: Set<Int32> { state.withLock { Set($0.partitions.keys) } }

    /// Updates currently waiting for a pending update of their key to settle (for tests and diagnostics).
    var waitingUpdateCount: Int { state.withLock { $0.waiters.count } }

    /// Keys with a value in a partition (nil when not installed).
    func count(in partition: Int32) -> Int? { state.withLock { $0.partitions[partition]?.values.count } }

    /// The applied value of a key (pending updates aside).
    func value(_ key: String, in partition: Int32) -> Value? { state.withLock { $0.partitions[partition]?.values[key] } }

    /// Reads the key's value and decides its next one with `body` (under the lock, so keep it
    /// short and pure). A new value (non-nil) is applied at once without a scope, else when the
    /// scope settles delivered.
    /// - Throws: ``FulfilmentLedgerError`` when the partition is not installed or was installed for
    ///   a later assignment than the scope's, what `body` throws, or `CancellationError` while
    ///   waiting for a pending update of the key.
    func update<R: Sendable>(_ key: String, in partition: Int32, scope: DeliveryScope?,
                             _ body: (Value?) throws -> (Value?, R)) async throws -> R {
        while true {
            try Task.checkCancellation()
            let step = try state.withLock { state throws -> Step<R> in
                try Self.withPartition(&state, partition) { entry throws -> Step<R> in
                    if let scope, scope.epoch < entry.epoch { return .stale(entry.epoch) }
                    if entry.pending[key] != nil { return .wait }
                    let (next, result) = try body(entry.values[key])
                    guard let next else { return .answer(result) }
                    guard let scope else {
                        Self.apply(next, key, to: &entry, capacity: capacity)
                        return .answer(result)
                    }
                    entry.pending[key] = (next, ObjectIdentifier(scope))
                    return .pending(result)
                } ?? .notReady
            }
            switch step {
            case .answer(let result):
                return result
            case .pending(let result):
                let owner = ObjectIdentifier(scope!)
                scope!.onSettle { [self] delivered in
                    settle(key, in: partition, owner: owner, delivered: delivered)
                }
                return result
            case .notReady:
                throw FulfilmentLedgerError("state partition \(partition) is not ready (not assigned, or still being rebuilt)")
            case .stale(let installed):
                throw FulfilmentLedgerError("state partition \(partition) was rebuilt for a later assignment "
                                            + "(\(installed)) than the record's (\(scope!.epoch))")
            case .wait:
                // It may wait on a record of its own batch, which is sent only after this one.
                await scope?.beforeWaiting()
                await waitForSettlement(of: key, in: partition)
            }
        }
    }

    /// Runs `body` on a partition mutated in place: taken out of the dictionary while it runs, so
    /// its storage stays uniquely referenced (a copy would duplicate every value on the first
    /// write: O(values) per update). - Returns: nil when the partition is not installed.
    private static func withPartition<T>(_ state: inout State, _ partition: Int32,
                                         _ body: (inout Partition) throws -> T) rethrows -> T? {
        guard var entry = state.partitions.removeValue(forKey: partition) else { return nil }
        defer { state.partitions[partition] = entry }
        return try body(&entry)
    }

    private static func apply(_ value: Value, _ key: String, to entry: inout Partition, capacity: Int?) {
        if entry.values.updateValue(value, forKey: key) == nil, let capacity {
            entry.order.append(key)
            while entry.order.count - entry.head > capacity {
                entry.values[entry.order[entry.head]] = nil
                entry.head += 1
            }
            if entry.head > 1024, entry.head * 2 > entry.order.count {
                entry.order.removeFirst(entry.head)
                entry.head = 0
            }
        }
    }

    private func settle(_ key: String, in partition: Int32, owner: ObjectIdentifier, delivered: Bool) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let settled = Self.withPartition(&state, partition) { entry -> Bool in
                guard let pending = entry.pending[key], pending.scope == owner else { return false }
                entry.pending[key] = nil
                if delivered { Self.apply(pending.value, key, to: &entry, capacity: capacity) }
                return true
            }
            guard settled == true else { return [] }
            return Self.takeWaiters(&state) { $0.partition == partition && $0.key == key }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Suspends until the pending update of `key` settles, its partition changes, or cancellation.
    private func waitForSettlement(of key: String, in partition: Int32) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard !Task.isCancelled, state.partitions[partition]?.pending[key] != nil else { return true }
                    state.waiters[id] = Waiter(partition: partition, key: key, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    private static func takeWaiters(_ state: inout State, where matches: (Waiter) -> Bool) -> [CheckedContinuation<Void, Never>] {
        let ids = state.waiters.filter { matches($0.value) }.map(\.key)
        return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
    }
}
