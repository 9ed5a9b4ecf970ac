/// Whether a failure may succeed on another attempt.
public enum FailureDisposition: String, Sendable, Hashable {
    /// May succeed later (network, timeouts, throttling): the ``RetryPolicy`` decides.
    case transient
    /// Will never succeed (bad signature, wrong bundle): rejected at once.
    case permanent
}

/// An error that says how the runner should treat it. Errors without this conformance are
/// treated as transient with reason ``ReasonCode/unclassified``.
public protocol ClassifiedError: Error {
    /// Retry or reject.
    var disposition: FailureDisposition { get }
    /// The stable code written to rejections, headers and logs.
    var reason: ReasonCode { get }
}

/// The ready-made ``ClassifiedError``: a disposition, a reason code and a human detail.
public struct StageError: ClassifiedError, CustomStringConvertible, Equatable {
    public var disposition: FailureDisposition
    public var reason: ReasonCode
    /// Human-readable context; must not contain payloads or secrets.
    public var detail: String

    /// Creates an error.
    public init(_ disposition: FailureDisposition, reason: ReasonCode, detail: String) {
        self.disposition = disposition
        self.reason = reason
        self.detail = detail
    }

    /// A failure that will never succeed.
    public static func permanent(_ reason: ReasonCode, _ detail: String) -> StageError {
        StageError(.permanent, reason: reason, detail: detail)
    }

    /// A failure that may succeed on a later attempt.
    public static func transient(_ reason: ReasonCode, _ detail: String) -> StageError {
        StageError(.transient, reason: reason, detail: detail)
    }

    public var description: String { "\(disposition) \(reason): \(detail)" }
}
