import Foundation

/// Whether a failure may succeed on another attempt.
public enum FailureDisposition: String, Sendable, Hashable {
    /// May succeed later (network, timeouts, throttling): the ``RetryPolicy`` decides.
    case transient
    /// Will never succeed (bad signature, wrong bundle): rejected at once.
    case permanent
}

/// An error that says how the runner should treat it. Errors without this conformance are
/// treated as transient with reason ``ReasonCode/unclassified``.
///
/// Besides the disposition and the reason code, an error may carry what the App Store said
/// (all optional, `nil` by default): the runner copies it into the provenance headers of retried
/// and dead-lettered records (``RecordHeaders/appleStatus``, ``RecordHeaders/appleErrorCode``,
/// ``RecordHeaders/environment``), and a ``retryAfter`` pushes the next attempt later.
public protocol ClassifiedError: Error {
    /// Retry or reject.
    var disposition: FailureDisposition { get }
    /// The stable code written to rejections, headers and logs.
    var reason: ReasonCode { get }
    /// For a transient failure: the earliest instant another attempt makes sense (Apple's
    /// `Retry-After`). The ``TieredRetryPolicy`` never schedules the next attempt before it.
    var retryAfter: Date? { get }
    /// The HTTP status the App Store answered with (e.g. 429, 503), when the failure came from it.
    var appleStatus: Int? { get }
    /// The App Store's numeric `errorCode` from the response body (e.g. 4290000).
    var appleErrorCode: Int? { get }
    /// The App Store environment involved (`Production`, `Sandbox`), when known.
    var environment: String? { get }
}

extension ClassifiedError {
    /// No `Retry-After` by default.
    public var retryAfter: Date? { nil }
    /// No App Store status by default.
    public var appleStatus: Int? { nil }
    /// No App Store error code by default.
    public var appleErrorCode: Int? { nil }
    /// No environment by default.
    public var environment: String? { nil }
}

/// The ready-made ``ClassifiedError``: a disposition, a reason code, a human detail and the
/// optional App Store metadata.
public struct StageError: ClassifiedError, CustomStringConvertible, Equatable {
    public var disposition: FailureDisposition
    public var reason: ReasonCode
    /// Human-readable context; must not contain payloads or secrets.
    public var detail: String
    public var retryAfter: Date?
    public var appleStatus: Int?
    public var appleErrorCode: Int?
    public var environment: String?

    /// Creates an error.
    /// - Parameters:
    ///   - disposition: retry or reject.
    ///   - reason: the stable reason code.
    ///   - detail: human-readable context (no payloads, no secrets).
    ///   - retryAfter: Apple's `Retry-After`, for transient failures.
    ///   - appleStatus: the App Store's HTTP status.
    ///   - appleErrorCode: the App Store's numeric error code.
    ///   - environment: the App Store environment involved.
    public init(_ disposition: FailureDisposition, reason: ReasonCode, detail: String, retryAfter: Date? = nil,
                appleStatus: Int? = nil, appleErrorCode: Int? = nil, environment: String? = nil) {
        self.disposition = disposition
        self.reason = reason
        self.detail = detail
        self.retryAfter = retryAfter
        self.appleStatus = appleStatus
        self.appleErrorCode = appleErrorCode
        self.environment = environment
    }

    /// A failure that will never succeed.
    public static func permanent(_ reason: ReasonCode, _ detail: String) -> StageError {
        StageError(.permanent, reason: reason, detail: detail)
    }

    /// A failure that may succeed on a later attempt, not before `retryAfter` when given.
    public static func transient(_ reason: ReasonCode, _ detail: String, retryAfter: Date? = nil) -> StageError {
        StageError(.transient, reason: reason, detail: detail, retryAfter: retryAfter)
    }

    public var description: String { "\(disposition) \(reason): \(detail)" }
}
