import Synchronization

/// Counts of what a ``FakeAppStore`` answered, so tests can assert that a fault actually fired.
public struct FakeAppStoreStatistics: Sendable, Equatable {
    /// Requests received.
    public var requests = 0
    /// Server API requests refused with 401.
    public var unauthorized = 0
    /// Connections dropped by the drop fault.
    public var dropped = 0
    /// Requests held by the timeout fault.
    public var timedOut = 0
    /// Server errors injected.
    public var serverErrors = 0
    /// 429s injected.
    public var rateLimited = 0
    /// `verifyReceipt` 21005s injected.
    public var status21005 = 0
    /// `verifyReceipt` 21007/21008 routing answers.
    public var reroutes = 0
}

/// Lock-free counters behind ``FakeAppStoreStatistics``.
final class FakeAppStoreCounters: Sendable {
    let requests = Atomic<Int>(0)
    let unauthorized = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let timedOut = Atomic<Int>(0)
    let serverErrors = Atomic<Int>(0)
    let rateLimited = Atomic<Int>(0)
    let status21005 = Atomic<Int>(0)
    let reroutes = Atomic<Int>(0)

    var snapshot: FakeAppStoreStatistics {
        FakeAppStoreStatistics(
            requests: requests.load(ordering: .relaxed), unauthorized: unauthorized.load(ordering: .relaxed),
            dropped: dropped.load(ordering: .relaxed), timedOut: timedOut.load(ordering: .relaxed),
            serverErrors: serverErrors.load(ordering: .relaxed), rateLimited: rateLimited.load(ordering: .relaxed),
            status21005: status21005.load(ordering: .relaxed), reroutes: reroutes.load(ordering: .relaxed))
    }
}
