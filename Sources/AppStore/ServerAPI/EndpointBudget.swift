import Foundation

/// One endpoint's request budget as a pure state machine (the clock is an argument), so the rule
/// is tested without waiting: at most `allowance` requests reach Apple in any sliding window.
///
/// A request holds its slot from admission until it *finished*, and for one window after that:
/// any two requests that can arrive at Apple within one window were then both counted when the
/// later one was admitted, however long the network or the HTTP client queued them.
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
    /// Finish times (and booked growth) within the last window, oldest first.
    private var spent: [Date] = []
    /// Admitted requests not finished yet, by ticket.
    private var inFlight: [UInt64: Date] = [:]
    private var nextTicket: UInt64 = 0
    /// Allowances in effect, with when they started; kept for one window.
    private var history: [(start: Date, allowance: Int)] = []
    /// Apple's `Retry-After`.
    public private(set) var pausedUntil: Date?
    /// Whether a share was set yet (before that, the whole budget, unused).
    private var shared = false

    public static func == (lhs: EndpointBudget, rhs: EndpointBudget) -> Bool {
        lhs.requests == rhs.requests && lhs.window == rhs.window && lhs.allowance == rhs.allowance
            && lhs.spent == rhs.spent && lhs.inFlight == rhs.inFlight && lhs.pausedUntil == rhs.pausedUntil
            && lhs.shared == rhs.shared
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

    /// What ``admit(at:)`` decided.
    public enum Decision: Sendable, Equatable {
        /// Send it, then call ``finish(_:at:)`` with the ticket.
        case admitted(ticket: UInt64)
        /// Ask again at this instant (or earlier, when a request in flight finishes).
        case wait(until: Date)
    }

    /// How long to wait when only requests still in flight hold the slots.
    static let inFlightRecheck: TimeInterval = 0.05

    /// Admits a request at `now` if a slot is free.
    public mutating func admit(at now: Date) -> Decision {
        prune(now)
        if let pausedUntil, pausedUntil > now { return .wait(until: pausedUntil) }
        if spent.count + inFlight.count < allowance {
            nextTicket += 1
            inFlight[nextTicket] = now
            return .admitted(ticket: nextTicket)
        }
        guard allowance > 0 else { return .wait(until: now.addingTimeInterval(window)) }
        // Slots free up as finished requests leave the window; requests in flight hold theirs.
        let mustLeave = spent.count + inFlight.count - allowance + 1
        guard mustLeave <= spent.count else { return .wait(until: now.addingTimeInterval(Self.inFlightRecheck)) }
        return .wait(until: spent[mustLeave - 1].addingTimeInterval(window))
    }

    /// The request of `ticket` got its answer (or failed) at `now`: its slot stays taken for one window.
    public mutating func finish(_ ticket: UInt64, at now: Date) {
        guard inFlight.removeValue(forKey: ticket) != nil else { return }
        let index = spent.firstIndex { $0 > now } ?? spent.endIndex
        spent.insert(now, at: index)
    }

    /// Slots taken at `now`: requests in flight, and those finished (or booked) within the window.
    public func used(at now: Date) -> Int { spent.filter { $0 > now.addingTimeInterval(-window) }.count + inFlight.count }

    private mutating func prune(_ now: Date) {
        let horizon = now.addingTimeInterval(-window)
        spent.removeAll { $0 <= horizon }
        // Keep the allowance in effect at the horizon and everything after it.
        if let lastBefore = history.lastIndex(where: { $0.start <= horizon }), lastBefore > 0 {
            history.removeFirst(lastBefore)
        }
    }
}
