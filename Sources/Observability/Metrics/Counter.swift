import Synchronization

/// A monotonically increasing count, resolved once (name and labels) and then incremented with
/// one relaxed atomic add: recording never allocates, hashes or locks.
public final class Counter: Sendable {
    private let storage = Atomic<Int64>(0)

    init() {}

    /// Adds `amount` (which must not be negative: counters only go up).
    public func increment(by amount: Int64 = 1) {
        storage.wrappingAdd(amount, ordering: .relaxed)
    }

    /// The current count.
    public var value: Int64 { storage.load(ordering: .relaxed) }
}
