import AppStore
import Foundation

/// An App Store Server API or `verifyReceipt` failure as the stage runner sees it: the taxonomy's
/// stable code as the reason, its retryability as the disposition, and Apple's `Retry-After`
/// kept so the retry policy can honour it.
public struct AppStoreRequestStageError: ClassifiedError, CustomStringConvertible {
    public var disposition: FailureDisposition
    public var reason: ReasonCode
    /// The earliest instant Apple allows the next request, when it said so.
    public var retryAfter: Date?
    /// Whether this signals a misconfigured deployment (credentials, shared secret) rather than a bad purchase.
    public var isConfigurationAlarm: Bool
    public var detail: String

    /// Wraps a client failure.
    public init(_ failure: any AppStoreRequestFailure) {
        disposition = failure.isRetryable ? .transient : .permanent
        reason = ReasonCode(failure.reason.code)
        retryAfter = failure.retryAfter
        isConfigurationAlarm = failure.isConfigurationAlarm
        detail = "\(failure)"
    }

    public var description: String { "\(disposition) \(reason): \(detail)" }
}
