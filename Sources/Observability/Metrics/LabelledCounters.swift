import Synchronization

/// Counters of one family keyed by a bounded value (a reason code, a topic, a tier), each
/// resolved in the registry the first time its key is seen and then found with one lookup; label
/// strings are built once per key, never per observation.
public final class LabelledCounters<Key: Hashable & Sendable>: Sendable {
    private let counters = Mutex<[Key: Counter]>([:])
    private let resolve: @Sendable (Key) -> Counter

    /// - Parameter resolve: makes the counter of a key (called once per key, under the lock).
    public init(_ resolve: @escaping @Sendable (Key) -> Counter) {
        self.resolve = resolve
    }

    /// The counter of `key`.
    public subscript(key: Key) -> Counter {
        counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = resolve(key)
            counters[key] = counter
            return counter
        }
    }
}
