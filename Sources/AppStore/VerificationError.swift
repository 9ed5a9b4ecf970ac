/// A rejected signed payload: the ``reason`` code plus a short human-readable ``detail``.
///
/// Expected rejections are returned as values inside ``VerificationResult/invalid(_:)``; this type
/// is also an `Error` so callers may throw it onwards. The detail names the failing field or check
/// and never contains the JWS itself (at most a truncated member name).
public struct VerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable classification of the failure.
    public let reason: VerificationReason
    /// A short explanation for logs, e.g. `x5c[2] is not a configured trust anchor`.
    public let detail: String

    /// Creates an error.
    /// - Parameters:
    ///   - reason: The classification.
    ///   - detail: A short explanation; must not contain the input JWS.
    public init(_ reason: VerificationReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// Whether a later retry of the same input may succeed. Every offline failure is final (`false`).
    public var isRetryable: Bool { reason.isRetryable }

    /// `code: detail`.
    public var description: String { "\(reason.code): \(detail)" }
}
