import AppStore

/// Fault injection knobs of a ``FakeAppStore``, set in its configuration and changeable while it
/// runs (``FakeAppStore/faults``), so a test or a chaos run can make Apple misbehave on cue.
///
/// Every request first waits ``latency`` plus a uniform random part of ``jitter``. Then one random
/// draw picks at most one fault, with these probabilities (each in 0...1, summing to at most 1):
/// ``dropRate`` (close the connection without a reply), ``timeoutRate`` (hold the request for
/// ``timeoutHold``, longer than any sane client timeout, then drop it), ``serverErrorRate``
/// (HTTP 500 with `5000001` on the Server API, HTTP 503 on `verifyReceipt`), ``rateLimitRate``
/// (HTTP 429, `4290000`, `Retry-After` = now + ``retryAfterDelay`` as UNIX milliseconds, as Apple
/// sends it) and ``status21005Rate`` (`verifyReceipt` only: `{"status": 21005}`).
public struct FakeAppStoreFaults: Sendable, Equatable {
    /// Fixed delay before every answer.
    public var latency: Duration = .zero
    /// Upper bound of an extra uniform random delay.
    public var jitter: Duration = .zero
    /// Probability of dropping the connection without a reply.
    public var dropRate: Double = 0
    /// Probability of holding the request past the client's timeout.
    public var timeoutRate: Double = 0
    /// How long a "timed out" request is held before its connection is dropped.
    public var timeoutHold: Duration = .seconds(30)
    /// Probability of a server error.
    public var serverErrorRate: Double = 0
    /// Probability of HTTP 429.
    public var rateLimitRate: Double = 0
    /// How far in the future `Retry-After` points.
    public var retryAfterDelay: Duration = .seconds(1)
    /// Probability of `verifyReceipt` status 21005.
    public var status21005Rate: Double = 0
    /// Answer 21007 when a sandbox receipt reaches the production `verifyReceipt` (Apple's
    /// behaviour; turn off to simulate a production endpoint that wrongly accepts it).
    public var sandboxReceiptOnProductionAnswers21007 = true

    /// No faults, no latency.
    public static let none = FakeAppStoreFaults()

    /// Creates the fault-free default; set the knobs afterwards.
    public init() {}

    /// Checks ranges.
    /// - Throws: ``AppStoreConfigurationError`` naming the offending knob.
    public func validate() throws(AppStoreConfigurationError) {
        func fail(_ key: String, _ message: String) -> AppStoreConfigurationError {
            AppStoreConfigurationError(key: "faults.\(key)", message: message)
        }
        let rates = [("dropRate", dropRate), ("timeoutRate", timeoutRate), ("serverErrorRate", serverErrorRate),
                     ("rateLimitRate", rateLimitRate), ("status21005Rate", status21005Rate)]
        for (key, rate) in rates where !(0...1).contains(rate) {
            throw fail(key, "must be in 0...1, got \(rate)")
        }
        guard rates.map(\.1).reduce(0, +) <= 1.000_001 else { throw fail("rates", "the fault rates must sum to at most 1") }
        guard latency >= .zero, jitter >= .zero, timeoutHold >= .zero, retryAfterDelay >= .zero else {
            throw fail("durations", "latency, jitter, timeoutHold and retryAfterDelay must not be negative")
        }
    }

    /// The fault a request suffers, if any.
    enum Fault: Equatable {
        case drop, timeout, serverError, rateLimit, status21005
    }

    /// Picks the fault for one request from one uniform draw `u` in `0..<1`.
    /// - Parameters:
    ///   - u: The draw.
    ///   - verifyReceipt: Whether 21005 applies (the legacy endpoint only).
    func pick(_ u: Double, verifyReceipt: Bool) -> Fault? {
        var bound = 0.0
        let ladder: [(Fault, Double)] = [(.drop, dropRate), (.timeout, timeoutRate), (.serverError, serverErrorRate),
                                         (.rateLimit, rateLimitRate), (.status21005, verifyReceipt ? status21005Rate : 0)]
        for (fault, rate) in ladder where rate > 0 {
            bound += rate
            if u < bound { return fault }
        }
        return nil
    }
}
