import Foundation
import HTTP

/// A failed App Store Server API request, classified for retry policy.
///
/// Carries Apple's numeric `errorCode` and message when the body had them, the HTTP status, the
/// environment asked, whether a retry may help (``isRetryable``, already bounded by the attempt
/// count where the reason is bounded) and when Apple allows the next request (``retryAfter``).
/// The ``reason`` code table is on ``AppStoreFailureReason``.
public struct AppStoreServerAPIError: AppStoreRequestFailure, Equatable, CustomStringConvertible {
    /// The stable classification.
    public let reason: AppStoreFailureReason
    /// The HTTP status, when a response arrived.
    public let httpStatus: Int?
    /// Apple's `errorCode` (e.g. `4040010`), when the body carried one.
    public let apiErrorCode: Int64?
    /// Apple's `errorMessage`, when the body carried one.
    public let apiErrorMessage: String?
    /// The environment the (last) request went to.
    public let environment: AppStoreEnvironment?
    /// Whether the same request may succeed later.
    public let isRetryable: Bool
    /// The earliest instant Apple allows another request (from `Retry-After`).
    public let retryAfter: Date?
    /// A short explanation for logs (never a token or key).
    public let detail: String

    /// Creates an error (the client builds these; tests and stubs may too).
    /// - Parameters:
    ///   - reason: The classification.
    ///   - httpStatus: The HTTP status, if any.
    ///   - apiErrorCode: Apple's `errorCode`, if any.
    ///   - apiErrorMessage: Apple's `errorMessage`, if any.
    ///   - environment: The environment asked.
    ///   - isRetryable: Defaults to the reason's table value.
    ///   - retryAfter: From `Retry-After`.
    ///   - detail: A short explanation.
    public init(reason: AppStoreFailureReason, httpStatus: Int? = nil, apiErrorCode: Int64? = nil,
                apiErrorMessage: String? = nil, environment: AppStoreEnvironment? = nil, isRetryable: Bool? = nil,
                retryAfter: Date? = nil, detail: String) {
        self.reason = reason
        self.httpStatus = httpStatus
        self.apiErrorCode = apiErrorCode
        self.apiErrorMessage = apiErrorMessage
        self.environment = environment
        self.isRetryable = isRetryable ?? reason.isRetryable
        self.retryAfter = retryAfter
        self.detail = detail
    }

    /// `code (HTTP n, errorCode m, Environment): detail`.
    public var description: String {
        var parts: [String] = []
        if let httpStatus { parts.append("HTTP \(httpStatus)") }
        if let apiErrorCode { parts.append("errorCode \(apiErrorCode)") }
        if let environment { parts.append(environment.rawValue) }
        parts.append(isRetryable ? "retryable" : "final")
        return "\(reason.code) (\(parts.joined(separator: ", "))): \(detail)"
    }

    /// The same error with a different retry answer (bounded reasons).
    func with(isRetryable: Bool, detail: String? = nil) -> AppStoreServerAPIError {
        AppStoreServerAPIError(reason: reason, httpStatus: httpStatus, apiErrorCode: apiErrorCode,
                               apiErrorMessage: apiErrorMessage, environment: environment, isRetryable: isRetryable,
                               retryAfter: retryAfter, detail: detail ?? self.detail)
    }
}

extension AppStoreServerAPIError {
    /// Apple's numeric `errorCode`s that change the classification.
    public enum APIErrorCode {
        /// `AccountNotFoundRetryableError`.
        public static let accountNotFoundRetryable: Int64 = 4_040_002
        /// `AppNotFoundRetryableError`.
        public static let appNotFoundRetryable: Int64 = 4_040_004
        /// `OriginalTransactionIdNotFoundRetryableError`.
        public static let originalTransactionIdNotFoundRetryable: Int64 = 4_040_006
        /// `TransactionIdNotFoundError`.
        public static let transactionIdNotFound: Int64 = 4_040_010
        /// `RateLimitExceededError`.
        public static let rateLimitExceeded: Int64 = 4_290_000
        /// `GeneralInternalError`.
        public static let generalInternal: Int64 = 5_000_000
        /// `GeneralInternalRetryableError`.
        public static let generalInternalRetryable: Int64 = 5_000_001
    }

    /// Classifies a non-2xx response.
    ///
    /// Order matters: 401 first (Apple sends no body), then rate limiting, Apple's retryable
    /// codes, 5xx, `4040010`, then the remaining 4xx by status.
    /// - Parameters:
    ///   - response: The response.
    ///   - environment: The environment asked.
    ///   - now: For delta-seconds `Retry-After` values.
    /// - Returns: The classified error; `4040010` comes back retryable, and the client bounds it.
    public static func classify(_ response: HTTPResponse, environment: AppStoreEnvironment?,
                                now: Date) -> AppStoreServerAPIError {
        let (code, message) = apiError(in: response.body)
        let retryAfter = response.headers["Retry-After"].flatMap { AppStoreRetryAfter.parse($0, now: now) }
        func make(_ reason: AppStoreFailureReason, _ detail: String, retryAfter: Date? = nil) -> AppStoreServerAPIError {
            AppStoreServerAPIError(reason: reason, httpStatus: response.status, apiErrorCode: code, apiErrorMessage: message,
                                   environment: environment, retryAfter: retryAfter, detail: detail)
        }
        let status = response.status
        if status == 401 {
            return make(.apiUnauthorized, "the bearer token was refused: check key id, issuer id, key file, bundle id and clock")
        }
        if status == 429 || code == APIErrorCode.rateLimitExceeded {
            return make(.apiRateLimited, "rate limit exceeded", retryAfter: retryAfter)
        }
        if let code, [APIErrorCode.accountNotFoundRetryable, APIErrorCode.appNotFoundRetryable,
                      APIErrorCode.originalTransactionIdNotFoundRetryable].contains(code) {
            return make(.apiNotFoundRetryable, "Apple asks to retry (\(code))", retryAfter: retryAfter)
        }
        if status >= 500 || code == APIErrorCode.generalInternalRetryable || code == APIErrorCode.generalInternal {
            return make(.apiUnavailable, "App Store Server API unavailable", retryAfter: retryAfter)
        }
        if code == APIErrorCode.transactionIdNotFound {
            return make(.apiTransactionNotFound, "transaction id not found")
        }
        switch status {
        case 404: return make(.apiNotFound, "not found")
        case 400: return make(.apiBadRequest, "the request was invalid")
        case 300..<400: return make(.apiRequestRejected, "unexpected redirect")
        default: return make(.apiRequestRejected, "request rejected")
        }
    }

    /// Classifies a transport failure (timeout, connection, TLS, cancellation).
    static func transport(_ error: any Error, environment: AppStoreEnvironment) -> AppStoreServerAPIError {
        let detail = (error as? HTTPError)?.description ?? String(describing: type(of: error))
        return AppStoreServerAPIError(reason: .transport(error), environment: environment, detail: detail)
    }

    /// `errorCode` and `errorMessage` from an error body, when it is the documented JSON.
    static func apiError(in body: [UInt8]) -> (Int64?, String?) {
        guard !body.isEmpty, body.count <= 65_536,
              case .object(let object)? = try? JSONParser.parse(body, maxDepth: 8) else { return (nil, nil) }
        let code = try? object.optionalInt64("errorCode")
        let message = try? object.optionalString("errorMessage")
        return (code ?? nil, message ?? nil)
    }
}
