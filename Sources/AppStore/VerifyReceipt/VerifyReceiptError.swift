import Foundation
import HTTP

/// A failed `verifyReceipt` request, classified for retry policy (codes on ``AppStoreFailureReason``).
public struct VerifyReceiptError: AppStoreRequestFailure, Equatable, CustomStringConvertible {
    /// The stable classification.
    public let reason: AppStoreFailureReason
    /// Apple's `status`, when a JSON answer arrived.
    public let status: Int?
    /// The HTTP status, when a response arrived.
    public let httpStatus: Int?
    /// The endpoint asked last.
    public let environment: AppStoreEnvironment?
    /// Apple's `is-retryable`, when present.
    public let appleIsRetryable: Bool?
    /// Whether the same request may succeed later (bounded for 21002 by the attempt count).
    public let isRetryable: Bool
    /// The earliest instant the endpoint allows another request (`Retry-After` on HTTP 429/503).
    public let retryAfter: Date?
    /// A short explanation for logs (never the receipt or the shared secret).
    public let detail: String

    /// Creates an error (the client builds these; tests may too).
    /// - Parameters:
    ///   - reason: The classification.
    ///   - status: Apple's status.
    ///   - httpStatus: The HTTP status.
    ///   - environment: The endpoint asked.
    ///   - appleIsRetryable: Apple's `is-retryable`.
    ///   - isRetryable: Defaults to the reason's table value.
    ///   - retryAfter: From `Retry-After`.
    ///   - detail: A short explanation.
    public init(reason: AppStoreFailureReason, status: Int? = nil, httpStatus: Int? = nil,
                environment: AppStoreEnvironment? = nil, appleIsRetryable: Bool? = nil, isRetryable: Bool? = nil,
                retryAfter: Date? = nil, detail: String) {
        self.reason = reason
        self.status = status
        self.httpStatus = httpStatus
        self.environment = environment
        self.appleIsRetryable = appleIsRetryable
        self.isRetryable = isRetryable ?? reason.isRetryable
        self.retryAfter = retryAfter
        self.detail = detail
    }

    /// `code (status n, HTTP n, Environment): detail`.
    public var description: String {
        var parts: [String] = []
        if let status { parts.append("status \(status)") }
        if let httpStatus { parts.append("HTTP \(httpStatus)") }
        if let environment { parts.append(environment.rawValue) }
        parts.append(isRetryable ? "retryable" : "final")
        return "\(reason.code) (\(parts.joined(separator: ", "))): \(detail)"
    }

    /// Classifies a non-zero `status` other than the reroutes 21007/21008 and the success 21006.
    /// - Parameters:
    ///   - status: Apple's status.
    ///   - appleIsRetryable: Apple's `is-retryable`, which can only make a failure retryable.
    ///   - environment: The endpoint that answered.
    ///   - attempt: The caller's attempt number (bounds 21002).
    ///   - malformedAttempts: The configured bound for 21002.
    /// - Returns: The classified error.
    public static func classify(status: Int, appleIsRetryable: Bool?, environment: AppStoreEnvironment?,
                                attempt: Int, malformedAttempts: Int) -> VerifyReceiptError {
        let reason: AppStoreFailureReason
        var retryable: Bool?
        let detail: String
        switch status {
        case 21000: (reason, detail) = (.receiptUnreadable, "Apple could not read the request JSON")
        case 21002:
            (reason, detail) = (.receiptMalformed, "receipt-data malformed (attempt \(attempt) of \(malformedAttempts))")
            retryable = attempt < malformedAttempts
        case 21003: (reason, detail) = (.receiptUnauthenticated, "the receipt could not be authenticated")
        case 21004: (reason, detail) = (.receiptSharedSecret, "the shared secret does not match the app's")
        case 21005: (reason, detail) = (.receiptUnavailable, "the receipt server is not available")
        case 21009: (reason, detail) = (.receiptInternal, "internal data access error")
        case 21010: (reason, detail) = (.receiptAccountNotFound, "the user account cannot be found or was deleted")
        case 21100...21199: (reason, detail) = (.receiptDataAccess, "internal data access error \(status)")
        default: (reason, detail) = (.receiptUnknownStatus, "undocumented status \(status)")
        }
        if appleIsRetryable == true { retryable = true }
        return VerifyReceiptError(reason: reason, status: status, httpStatus: 200, environment: environment,
                                  appleIsRetryable: appleIsRetryable, isRetryable: retryable, detail: detail)
    }
}
