import Observability
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
///
/// Each installation spreads its keys over stripes with a lock each, so updates of different keys
/// (whose decisions run under the lock) do not queue behind one another on one partition.
final class StatePartitions<Value: Sendable>: Sendable {
    /// A key's applied value and its pending update: one entry, so an update and its settlement
    /// each look the key up once. Both boxed: an entry is two references wide however large the
    /// value (a purchase's state is hundreds of bytes), so the table's growth moves little, and a
    /// settled update becomes the applied value without a copy.
    private struct Entry {
        var applied: Boxed?
        var pending: Boxed?
    }

    private final class Boxed: Sendable {
        let value: Value
        /// The scope of the update that made it, if any: compared only while it is pending.
        let scope: ObjectIdentifier?

        init(_ value: Value, scope: ObjectIdentifier?) {
            self.value = value
            self.scope = scope
        }
    }

    /// A key with its hash taken once: an update, its settlement and the capacity bound look it up
    /// several times, and a probe compares hashes before strings (transaction ids share long
    /// prefixes, so passing another key would otherwise compare most of their bytes).
    private struct StateKey: Hashable {
        let name: String
        let hash: Int

        init(_ name: String) {
            self.name = name
            var hasher = Hasher()
            hasher.combine(name)
            hash = hasher.finalize()
        }

        static func == (lhs: StateKey, rhs: StateKey) -> Bool { lhs.hash == rhs.hash && lhs.name == rhs.name }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    private struct Waiter {
        let id: Int
        let key: StateKey
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct Contents {
        var entries: [StateKey: Entry]
        /// Entries with a value (pending-only entries aside).
        var valueCount: Int
        /// Insertion order of keys, for the capacity bound (only kept with a capacity).
        var order: [StateKey] = []
        var head = 0
        var waiters: [Waiter] = []
        /// Set when the installation is replaced or removed: updates then look the partition up
        /// again, settlements change nothing.
        var retired = false
    }

    private final class Stripe: Sendable {
        let contents: Mutex<Contents>

        init(_ values: [String: Value]) {
            let entries = values.map { (StateKey($0.key), Entry(applied: Boxed($0.value, scope: nil))) }
            contents = Mutex(Contents(entries: Dictionary(uniqueKeysWithValues: entries), valueCount: values.count))
        }
    }

    /// One installation of a partition.
    private final class Installation: Sendable {
        let epoch: AssignmentEpoch
        let stripes: [Stripe]

        init(values: [String: Value], epoch: AssignmentEpoch, stripes count: Int) {
            self.epoch = epoch
            guard count > 1 else {
                stripes = [Stripe(values)]
                return
            }
            var split = Array(repeating: [String: Value](), count: count)
            for (key, value) in values { split[Self.stripeIndex(of: key, count: count)][key] = value }
            stripes = split.map(Stripe.init)
        }

        @inline(__always)
        func stripe(of key: String) -> Stripe { stripes[Self.stripeIndex(of: key, count: stripes.count)] }

        /// Marks every stripe retired. - Returns: the updates waiting on it, to be resumed.
        func retire() -> [CheckedContinuation<Void, Never>] {
            stripes.flatMap { stripe in
                stripe.contents.withLock { contents in
                    contents.retired = true
                    defer { contents.waiters = [] }
                    return contents.waiters.map(\.continuation)
                }
            }
        }

        /// The stripe of a key from its length and last eight bytes (the keys' varying end:
        /// transaction ids, owner ids), cheaper than a full hash the dictionary repeats anyway.
        @inline(__always)
        static func stripeIndex(of key: String, count: Int) -> Int {
            guard count > 1 else { return 0 }
            let mixed = key.withUTF8InPlace { bytes -> UInt64 in
                guard let base = bytes.baseAddress else { return 0 }
                var tail: UInt64 = 0
                if bytes.count >= 8 {
                    tail = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
                } else {
                    for offset in 0..<bytes.count { tail |= UInt64(base[offset]) << (8 * UInt64(offset)) }
                }
                return (tail ^ UInt64(bytes.count)) &* 0x9E37_79B9_7F4A_7C15
            }
            return Int(truncatingIfNeeded: mixed >> 32) & (count - 1)
        }
    }

    private enum Step<R: Sendable>: Sendable {
        case answer(R)
        case pending(R)
        case wait
        case retired
    }

    private let installations = Mutex<[Int32: Installation]>([:])
    private let nextWaiter = Atomic<Int>(0)
    /// Keys kept per stripe before the oldest are forgotten (nil: unbounded).
    private let stripeCapacity: Int?
    /// Stripes per installation (a power of two).
    private let stripeCount: Int

    /// - Parameter capacity: keys kept per partition before the oldest are forgotten (nil:
    ///   unbounded). A bound of 8,192 or more is kept per stripe, each its share rounded up; a
    ///   smaller one is kept exactly, with one stripe.
    init(capacity: Int? = nil) {
        let capacity = capacity.map { max(1, $0) }
        let stripes = capacity.map { $0 >= 8_192 ? 8 : 1 } ?? 8
        stripeCount = stripes
        stripeCapacity = capacity.map { ($0 + stripes - 1) / stripes }
    }

    /// Installs (or replaces) a partition's values for an assignment; pending updates made before are void.
    func install(_ partition: Int32, values: [String: Value], epoch: AssignmentEpoch = .initial) {
        let installation = Installation(values: values, epoch: epoch, stripes: stripeCount)
        let replaced = installations.withLock { $0.updateValue(installation, forKey: partition) }
        for continuation in replaced?.retire() ?? [] { continuation.resume() }
    }

    /// Installs a partition's values unless it is installed (whose pending updates must survive).
    func installIfAbsent(_ partition: Int32, values: [String: Value], epoch: AssignmentEpoch) {
        guard installation(partition) == nil else { return }
        let fresh = Installation(values: values, epoch: epoch, stripes: stripeCount)
        installations.withLock { installations in
            if installations[partition] == nil { installations[partition] = fresh }
        }
    }

    /// Forgets a partition; updates waiting on it then fail as not ready.
    func remove(_ partition: Int32) {
        let removed = installations.withLock { $0.removeValue(forKey: partition) }
        for continuation in removed?.retire() ?? [] { continuation.resume() }
    }

    func isInstalled(_ partition: Int32) -> Bool { installation(partition) != nil }

    var installed: Set<Int32> { installations.withLock { Set($0.keys) } }

    /// Updates currently waiting for a pending update of their key to settle (for tests and diagnostics).
    var waitingUpdateCount: Int {
        installations.withLock { Array($0.values) }.reduce(0) { count, installation in
            installation.stripes.reduce(count) { count, stripe in count + stripe.contents.withLock { $0.waiters.count } }
        }
    }

    /// Keys with a value in a partition (nil when not installed).
    func count(in partition: Int32) -> Int? {
        installation(partition)?.stripes.reduce(0) { count, stripe in count + stripe.contents.withLock { $0.valueCount } }
    }

    /// The applied value of a key (pending updates aside).
    func value(_ key: String, in partition: Int32) -> Value? {
        installation(partition)?.stripe(of: key).contents.withLock { $0.entries[StateKey(key)]?.applied?.value }
    }

    private func installation(_ partition: Int32) -> Installation? { installations.withLock { $0[partition] } }

    /// Reads the key's value and decides its next one with `body` (under the key's stripe lock, so
    /// keep it short and pure). A new value (non-nil) is applied at once without a scope, else
    /// when the scope settles delivered.
    /// - Throws: ``FulfilmentLedgerError`` when the partition is not installed or was installed for
    ///   a later assignment than the scope's, what `body` throws, or `CancellationError` while
    ///   waiting for a pending update of the key.
    func update<R: Sendable>(_ key: String, in partition: Int32, scope: DeliveryScope?,
                             _ body: (Value?) throws -> (Value?, R)) async throws -> R {
        while true {
            try Task.checkCancellation()
            guard let installation = installation(partition) else {
                throw FulfilmentLedgerError("state partition \(partition) is not ready (not assigned, or still being rebuilt)")
            }
            if let scope, scope.epoch < installation.epoch {
                throw FulfilmentLedgerError("state partition \(partition) was rebuilt for a later assignment "
                                            + "(\(installation.epoch)) than the record's (\(scope.epoch))")
            }
            let stripe = installation.stripe(of: key), key = StateKey(key)
            let step = try stripe.contents.withLock { contents throws -> Step<R> in
                guard !contents.retired else { return .retired }
                let index = contents.entries.index(forKey: key)
                if let index, contents.entries.values[index].pending != nil { return .wait }
                let (next, result) = try body(index.flatMap { contents.entries.values[$0].applied?.value })
                guard let next else { return .answer(result) }
                guard let scope else {
                    Self.apply(Boxed(next, scope: nil), key, at: index, to: &contents, capacity: stripeCapacity)
                    return .answer(result)
                }
                let pending = Boxed(next, scope: ObjectIdentifier(scope))
                if let index {
                    contents.entries.values[index].pending = pending
                } else {
                    contents.entries[key] = Entry(pending: pending)
                }
                return .pending(result)
            }
            switch step {
            case .answer(let result):
                return result
            case .pending(let result):
                let owner = ObjectIdentifier(scope!), capacity = stripeCapacity
                scope!.onSettle { delivered in
                    Self.settle(key, in: stripe, owner: owner, delivered: delivered, capacity: capacity)
                }
                return result
            case .retired:
                continue
            case .wait:
                // It may wait on a record of its own batch, which is sent only after this one.
                await scope?.beforeWaiting()
                await waitForSettlement(of: key, in: stripe)
            }
        }
    }

    /// Applies a value to the key's entry (at `index` when it has one), forgetting the oldest keys
    /// past the capacity.
    private static func apply(_ value: Boxed, _ key: StateKey, at index: Dictionary<StateKey, Entry>.Index?,
                              to contents: inout Contents, capacity: Int?) {
        let added: Bool
        if let index {
            added = contents.entries.values[index].applied == nil
            contents.entries.values[index].applied = value
        } else {
            added = true
            contents.entries[key] = Entry(applied: value)
        }
        guard added else { return }
        contents.valueCount += 1
        guard let capacity else { return }
        contents.order.append(key)
        while contents.order.count - contents.head > capacity {
            let oldest = contents.order[contents.head]
            contents.head += 1
            guard let position = contents.entries.index(forKey: oldest), contents.entries.values[position].applied != nil else { continue }
            contents.valueCount -= 1
            if contents.entries.values[position].pending == nil {
                contents.entries.remove(at: position)
            } else {
                contents.entries.values[position].applied = nil
            }
        }
        if contents.head > 1024, contents.head * 2 > contents.order.count {
            contents.order.removeFirst(contents.head)
            contents.head = 0
        }
    }

    private static func settle(_ key: StateKey, in stripe: Stripe, owner: ObjectIdentifier, delivered: Bool, capacity: Int?) {
        let woken = stripe.contents.withLock { contents -> [CheckedContinuation<Void, Never>] in
            guard !contents.retired, let index = contents.entries.index(forKey: key),
                  let pending = contents.entries.values[index].pending, pending.scope == owner else { return [] }
            if delivered {
                contents.entries.values[index].pending = nil
                apply(pending, key, at: index, to: &contents, capacity: capacity)
            } else if contents.entries.values[index].applied == nil {
                contents.entries.remove(at: index)
            } else {
                contents.entries.values[index].pending = nil
            }
            guard contents.waiters.contains(where: { $0.key == key }) else { return [] }
            let woken = contents.waiters.filter { $0.key == key }.map(\.continuation)
            contents.waiters.removeAll { $0.key == key }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Suspends until the pending update of `key` settles, its installation is retired, or cancellation.
    private func waitForSettlement(of key: StateKey, in stripe: Stripe) async {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = stripe.contents.withLock { contents -> Bool in
                    guard !Task.isCancelled, !contents.retired, let index = contents.entries.index(forKey: key),
                          contents.entries.values[index].pending != nil else { return true }
                    contents.waiters.append(Waiter(id: id, key: key, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            stripe.contents.withLock { contents -> CheckedContinuation<Void, Never>? in
                guard let position = contents.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return contents.waiters.remove(at: position).continuation
            }?.resume()
        }
    }
}
