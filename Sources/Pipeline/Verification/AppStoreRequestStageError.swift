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
    /// `verifyReceipt` status or HTTP status (the `receiptd-apple-status` dead-letter header).
    public var appleStatus: Int?
    /// App Store Server API `errorCode` (the `receiptd-apple-error-code` header).
    public var appleErrorCode: Int?
    /// The environment that answered (`Production`, `Sandbox`).
    public var environment: String?
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
        if let api = failure as? AppStoreServerAPIError {
            appleStatus = api.httpStatus
            appleErrorCode = api.apiErrorCode.map { Int($0) }
            environment = api.environment?.rawValue
        } else if let legacy = failure as? VerifyReceiptError {
            appleStatus = legacy.status ?? legacy.httpStatus
            environment = legacy.environment?.rawValue
        }
    }

    public var description: String { "\(disposition) \(reason): \(detail)" }
}
