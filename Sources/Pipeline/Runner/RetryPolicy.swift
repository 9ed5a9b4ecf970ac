import Foundation

/// What to do with a record whose processing failed transiently.
public enum RetryDecision: Sendable, Equatable {
    /// Re-publish the record to retry tier `tier` (1-based) of the stage's input, with its attempt
    /// header incremented; a tier consumer processes it again once `notBefore` has passed.
    case retry(tier: Int, notBefore: Date?)
    /// Give up: publish the record byte for byte to the dead-letter topic with provenance headers.
    case deadLetter
}

/// Decides, per failed attempt, between another try and the dead-letter topic
/// (Karafka's DLQ strategy function, swift-jobs' `JobRetryStrategy`). Permanent errors never
/// reach the policy: they are rejected at once.
public protocol RetryPolicy: Sendable {
    /// - Parameters:
    ///   - attempt: the attempt that just failed (1 = first try).
    ///   - error: what it failed with.
    func decide(attempt: Int, error: any Error) -> RetryDecision
}

extension RetryPolicy where Self == NeverRetryPolicy {
    /// Dead-letter at the first transient failure (a worker configured with no retry tiers).
    public static var never: NeverRetryPolicy { NeverRetryPolicy() }
}

extension RetryPolicy where Self == TieredRetryPolicy {
    /// Retry through one tier per delay (`<input>.retry.1`, `.retry.2`, …), then dead-letter.
    /// - Parameters:
    ///   - delays: the wait before each tier, e.g. `[.seconds(30), .seconds(300), .seconds(1800)]`.
    ///   - clock: "now", used to compute `notBefore`.
    public static func tiered(_ delays: [Duration],
                              clock: @escaping @Sendable () -> Date = { Date() }) -> TieredRetryPolicy {
        TieredRetryPolicy(delays: delays, clock: clock)
    }
}

/// The ``RetryPolicy`` that never retries.
public struct NeverRetryPolicy: RetryPolicy {
    /// Creates the policy.
    public init() {}

    public func decide(attempt: Int, error: any Error) -> RetryDecision {
        .deadLetter
    }
}

/// The ``RetryPolicy`` that walks a fixed list of retry tiers: attempt `n` that fails goes to tier
/// `n` (due `delays[n - 1]` later), and the attempt after the last tier goes to the dead-letter
/// topic. With the default delays (10 s, 1 min, 10 min, 1 h) a record gets five attempts over
/// about 71 minutes.
///
/// Fixed delays per tier keep due times monotonic within each tier partition, so the runner's
/// delay gate only has to hold a partition's head record. A ``ClassifiedError/retryAfter`` later
/// than the tier's delay pushes `notBefore` to it (Apple's `Retry-After` is honoured); the records
/// behind it in that tier partition then wait for it too, which is what a throttled upstream
/// wants anyway.
public struct TieredRetryPolicy: RetryPolicy {
    /// The delay before each tier; tier `n` uses `delays[n - 1]`.
    public let delays: [Duration]
    private let clock: @Sendable () -> Date

    /// Creates the policy (see ``RetryPolicy/tiered(_:clock:)``).
    public init(delays: [Duration], clock: @escaping @Sendable () -> Date = { Date() }) {
        self.delays = delays
        self.clock = clock
    }

    /// The most tiers a policy may have.
    public static let maxTiers = 20

    /// Checks the delays are usable: at most ``maxTiers``, each positive and at most 7 days.
    /// - Throws: ``PipelineConfigurationError`` naming the offending entry of `retry.tierDelaysSeconds`.
    public func validate() throws {
        guard delays.count <= Self.maxTiers else {
            throw PipelineConfigurationError("retry.tierDelaysSeconds has \(delays.count) tiers; at most \(Self.maxTiers) are allowed")
        }
        for (index, delay) in delays.enumerated() where delay <= .zero || delay > .seconds(7 * 86_400) {
            throw PipelineConfigurationError("retry.tierDelaysSeconds[\(index)] must be in (0, 604800] seconds, got \(delay)")
        }
    }

    public func decide(attempt: Int, error: any Error) -> RetryDecision {
        guard attempt >= 1, attempt <= delays.count else { return .deadLetter }
        var notBefore = clock().addingTimeInterval(delays[attempt - 1] / .seconds(1))
        if let retryAfter = (error as? any ClassifiedError)?.retryAfter, retryAfter > notBefore {
            notBefore = retryAfter
        }
        return .retry(tier: attempt, notBefore: notBefore)
    }
}
