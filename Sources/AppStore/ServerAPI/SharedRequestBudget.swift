import Foundation
import Synchronization

/// Budget for a group's share of an endpoint: `requests` per `window`.
public struct AppStoreBudget: Sendable, Equatable, Codable {
    public var requests: Int
    public var windowSeconds: Double

    public init(requests: Int, windowSeconds: Double) {
        self.requests = requests
        self.windowSeconds = windowSeconds
    }
}

/// The ``AppStoreRequestLimiter`` of one process: per endpoint an ``EndpointBudget`` holding this
/// process's share of the group's budget (``setShare(owned:of:)``, from its partitions), waiting
/// in the caller's task (never a thread) for a free slot, at most `maxWait`; a request holds its
/// slot while in flight and one window after its answer; a 429 pauses the endpoint for every
/// request of the process. Endpoints without a budget are never held.
public final class SharedRequestBudget: AppStoreRequestLimiter {
    private let budgets: Mutex<[AppStoreEndpoint: EndpointBudget]>
    private let maxWait: Duration
    private let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - budgets: The group's budget per endpoint; its window is widened by `margin` (clock
    ///     differences between here and Apple).
    ///   - maxWait: A request that would wait longer is deferred (not sent) with the instant it may go.
    ///   - clock: The current time.
    public init(budgets: [AppStoreEndpoint: AppStoreBudget], margin: Duration = .zero, maxWait: Duration,
                clock: @escaping @Sendable () -> Date = Date.init) {
        let now = clock()
        let marginSeconds = margin / .seconds(1)
        self.budgets = Mutex(budgets.mapValues {
            EndpointBudget(requests: $0.requests, window: $0.windowSeconds + marginSeconds, start: now)
        })
        self.maxWait = maxWait
        self.clock = clock
    }

    /// This process owns `owned` of the group's `total` partitions: its share of every budget.
    public func setShare(owned: Int, of total: Int) {
        let now = clock()
        budgets.withLock { budgets in
            for key in budgets.keys { budgets[key]!.setShare(owned: owned, of: total, at: now) }
        }
    }

    /// The requests per window this process may send to `endpoint` now (nil: unlimited).
    public func allowance(_ endpoint: AppStoreEndpoint) -> Int? { budgets.withLock { $0[endpoint]?.allowance } }

    public func admit(_ endpoint: AppStoreEndpoint) async -> AppStoreAdmission {
        let start = clock()
        let deadline = start.addingTimeInterval(maxWait / .seconds(1))
        while true {
            let now = clock()
            let decision = budgets.withLock { budgets -> EndpointBudget.Decision in
                budgets[endpoint] == nil ? .admitted(ticket: 0) : budgets[endpoint]!.admit(at: now)
            }
            switch decision {
            case .admitted(let ticket):
                return .admitted(ticket: ticket)
            case .wait(let next):
                if next > deadline || Task.isCancelled { return .deferred(until: next) }
                // Re-check at least every second: a pause or a share change may move the instant.
                try? await Task.sleep(for: .milliseconds(Int64(min(1.0, max(0.001, next.timeIntervalSince(now))) * 1000)))
            }
        }
    }

    public func finish(_ endpoint: AppStoreEndpoint, ticket: UInt64) {
        let now = clock()
        budgets.withLock { budgets in budgets[endpoint]?.finish(ticket, at: now) }
    }

    public func pause(_ endpoint: AppStoreEndpoint, until: Date) {
        budgets.withLock { budgets in budgets[endpoint]?.pause(until: until) }
    }
}
