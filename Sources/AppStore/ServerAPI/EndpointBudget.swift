import Foundation

/// One endpoint's request budget as a pure state machine (the clock is an argument), so the rule
/// is tested without waiting: at most `allowance` requests in any sliding window.
///
/// The allowance is this process's share of the group's budget. A share that shrinks applies at
/// once; one that grows beyond the largest share held during the last window applies one window
/// later (the growth is booked as used now), because the partitions' previous owner may have
/// spent their share in the current window and nothing tells us how much. The first share of a
/// process applies at once (it has no history to compare with): a worker joining the group can
/// exceed the budget by its share for at most one window.
public struct EndpointBudget: Sendable, Equatable {
    /// The group's budget: `requests` per `window`.
    public var requests: Int
    public var window: TimeInterval
    /// This process's share of `requests` (≤ `requests`).
    public private(set) var allowance: Int
    /// Admission times (and booked growth) within the last window, oldest first.
    private var spent: [Date] = []
    /// Allowances in effect, with when they started; kept for one window.
    private var history: [(start: Date, allowance: Int)] = []
    /// Apple's `Retry-After`.
    public private(set) var pausedUntil: Date?
    /// Whether a share was set yet (before that, the whole budget, unused).
    private var shared = false

    public static func == (lhs: EndpointBudget, rhs: EndpointBudget) -> Bool {
        lhs.requests == rhs.requests && lhs.window == rhs.window && lhs.allowance == rhs.allowance
            && lhs.spent == rhs.spent && lhs.pausedUntil == rhs.pausedUntil && lhs.shared == rhs.shared
    }

    /// - Parameters:
    ///   - requests: The group's requests per window.
    ///   - window: The window in seconds (Apple's limits are hourly).
    ///   - start: When the budget starts, with the whole budget as this process's share.
    public init(requests: Int, window: TimeInterval, start: Date) {
        self.requests = requests
        self.window = window
        self.allowance = requests
        self.history = [(start, requests)]
    }

    /// Sets this process's share: `owned` of `total` partitions (the whole budget when `total` is 0).
    public mutating func setShare(owned: Int, of total: Int, at now: Date) {
        prune(now)
        let next = total > 0 ? requests * max(0, min(owned, total)) / total : requests
        let recentMax = max(allowance, history.map(\.allowance).max() ?? 0)
        if shared, next > recentMax { spent.append(contentsOf: repeatElement(now, count: next - recentMax)) }
        if !shared { history.removeAll() }
        shared = true
        allowance = next
        history.append((now, next))
    }

    /// Apple said not before `until`.
    public mutating func pause(until: Date) {
        pausedUntil = max(pausedUntil ?? until, until)
    }

    /// Counts a request at `now` if the budget allows it.
    /// - Returns: nil when admitted, else the earliest instant worth asking again.
    public mutating func admit(at now: Date) -> Date? {
        prune(now)
        if let pausedUntil, pausedUntil > now { return pausedUntil }
        if spent.count < allowance {
            spent.append(now)
            return nil
        }
        guard allowance > 0 else { return now.addingTimeInterval(window) }
        // The oldest entries must leave the window until one slot is free.
        return spent[spent.count - allowance].addingTimeInterval(window)
    }

    /// Requests counted in the window ending at `now` (booked growth included).
    public func used(at now: Date) -> Int { spent.filter { $0 > now.addingTimeInterval(-window) }.count }

    private mutating func prune(_ now: Date) {
        let horizon = now.addingTimeInterval(-window)
        spent.removeAll { $0 <= horizon }
        // Keep the allowance in effect at the horizon and everything after it.
        if let lastBefore = history.lastIndex(where: { $0.start <= horizon }), lastBefore > 0 {
            history.removeFirst(lastBefore)
        }
    }
}
