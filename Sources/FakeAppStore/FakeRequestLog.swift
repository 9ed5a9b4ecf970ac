import Foundation
import Synchronization

/// When each Server API request arrived and when each 429 was answered, so tests can check a
/// client's request budget as Apple would count it (requests per window, per endpoint).
final class FakeRequestLog: Sendable {
    private struct State {
        var arrivals: [(path: String, at: Date)] = []
        var throttles: [FakeThrottle] = []
    }
    private let state = Mutex(State())

    func arrived(_ path: String, at date: Date) { state.withLock { $0.arrivals.append((path, date)) } }
    func throttled(_ path: String, at date: Date, retryAt: Date) {
        state.withLock { $0.throttles.append(FakeThrottle(path: path, answeredAt: date, retryAt: retryAt)) }
    }

    func arrivals(pathPrefix: String) -> [Date] {
        state.withLock { $0.arrivals.filter { $0.path.hasPrefix(pathPrefix) }.map(\.at) }
    }

    var throttles: [FakeThrottle] { state.withLock { $0.throttles } }
}

/// One 429 the fake answered.
public struct FakeThrottle: Sendable, Equatable {
    /// The request path (environment prefix removed).
    public var path: String
    public var answeredAt: Date
    /// The instant its `Retry-After` names.
    public var retryAt: Date
}

extension FakeAppStore {
    /// Arrival times of Server API requests whose path (without `/sandbox`) starts with `pathPrefix`.
    public func requestArrivals(pathPrefix: String) -> [Date] { router.requestLog.arrivals(pathPrefix: pathPrefix) }

    /// The most requests under `pathPrefix` that arrived within any sliding window of `window`.
    public func maxRequests(inAnyWindow window: Duration, pathPrefix: String) -> Int {
        let times = requestArrivals(pathPrefix: pathPrefix).sorted()
        let seconds = window / .seconds(1)
        var best = 0
        var start = 0
        for end in times.indices {
            while times[end].timeIntervalSince(times[start]) >= seconds { start += 1 }
            best = max(best, end - start + 1)
        }
        return best
    }

    /// Every 429 answered so far.
    public var throttles: [FakeThrottle] { router.requestLog.throttles }
}
