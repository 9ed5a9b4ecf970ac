import Foundation

/// What an ``AppStoreServerAPIClient`` asks before each request, so one worker (or one
/// reconciliation run) stays inside its share of Apple's per-endpoint limits.
public protocol AppStoreRequestLimiter: Sendable {
    /// Waits until `endpoint` may take one more request, and counts it.
    /// - Returns: `.admitted`, or `.deferred(until:)` when the wait would exceed the limiter's
    ///   bound (or the task was cancelled): the request is not sent and is retried later.
    func admit(_ endpoint: AppStoreEndpoint) async -> AppStoreAdmission

    /// Apple answered 429: no request to `endpoint` before `until`, for every caller of this limiter.
    func pause(_ endpoint: AppStoreEndpoint, until: Date)
}

/// The limiter's answer to one request.
public enum AppStoreAdmission: Sendable, Equatable {
    case admitted
    /// Not now: the earliest instant the budget (or Apple's pause) allows it.
    case deferred(until: Date)
}
