import Foundation

/// What an ``AppStoreServerAPIClient`` asks before each request, so one worker (or one
/// reconciliation run) stays inside its share of Apple's per-endpoint limits.
public protocol AppStoreRequestLimiter: Sendable {
    /// Waits until `endpoint` may take one more request, and counts it.
    /// - Returns: `.admitted` (an endpoint without a budget always is), or `.deferred(until:)` when the wait would exceed the limiter's
    ///   bound (or the task was cancelled): the request is not sent and is retried later.
    func admit(_ endpoint: AppStoreEndpoint) async -> AppStoreAdmission

    /// The admitted request of `ticket` has its answer (or failed): from now on it counts as sent.
    func finish(_ endpoint: AppStoreEndpoint, ticket: UInt64)

    /// Apple answered 429: no request to `endpoint` before `until`, for every caller of this limiter.
    func pause(_ endpoint: AppStoreEndpoint, until: Date)
}

/// The limiter's answer to one request.
public enum AppStoreAdmission: Sendable, Equatable {
    /// Send it, then report ``AppStoreRequestLimiter/finish(_:ticket:)`` with this ticket.
    case admitted(ticket: UInt64)
    /// Not now: the earliest instant the budget (or Apple's pause) allows it.
    case deferred(until: Date)
}
