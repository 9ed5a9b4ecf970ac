import Foundation
import HTTP

/// Why an online App Store request (App Store Server API or legacy `verifyReceipt`) failed, as a
/// stable machine-readable code: the online counterpart of ``VerificationReason``.
///
/// Codes are kebab-case and never change meaning, so logs, metrics labels, dead-letter headers and
/// rejection records can rely on them. Scheme: `<path>-<condition>[-<apple status>]`, where
/// `<path>` is `appstore-api` (App Store Server API), `verify-receipt` (legacy endpoint),
/// `network` (transport, either path) or `request` (the caller's own task); a legacy code carries
/// Apple's `status` number when the condition is exactly one status (`211xx` for the range).
///
/// *retryable* is the default answer; *bounded* codes are retryable until the caller's attempt
/// count reaches the configured limit, then final (the error's `isRetryable` has the answer for
/// that attempt). *alarm* marks failures that no retry can fix and that mean the deployment is
/// misconfigured (wrong key, wrong shared secret): page someone rather than reject purchases.
///
/// | code | when | retryable | alarm |
/// |---|---|---|---|
/// | `appstore-api-unauthorized` | HTTP 401: the bearer JWT was refused (key id, issuer id, key, bundle id, clock) | no | yes |
/// | `appstore-api-rate-limited` | HTTP 429 / `4290000`; `retryAfter` from `Retry-After` (UNIX ms) | yes | no |
/// | `appstore-api-unavailable` | HTTP 5xx, `5000000`, `5000001` | yes | no |
/// | `appstore-api-not-found-retryable` | `4040002`, `4040004`, `4040006` (Apple's "errors to retry") | yes | no |
/// | `appstore-api-transaction-not-found` | `4040010` in both environments | bounded | no |
/// | `appstore-api-not-found` | any other 404 (`4040001`, `4040003`, `4040005`, …) | no | no |
/// | `appstore-api-bad-request` | HTTP 400 (`4000xxx`): the request was invalid | no | no |
/// | `appstore-api-request-rejected` | any other 4xx | no | no |
/// | `appstore-api-invalid-response` | a 2xx whose body is not the documented JSON | yes | no |
/// | `appstore-api-invalid-request` | refused locally: the transaction id or revision cannot be sent | no | no |
/// | `appstore-api-signing-failed` | the bearer JWT could not be signed | no | yes |
/// | `verify-receipt-unreadable-21000` | status 21000: Apple could not read the request JSON | no | yes |
/// | `verify-receipt-malformed-21002` | status 21002: `receipt-data` malformed (also seen transiently) | bounded | no |
/// | `verify-receipt-unauthenticated-21003` | status 21003: the receipt could not be authenticated | no | no |
/// | `verify-receipt-shared-secret-21004` | status 21004: the shared secret does not match | no | yes |
/// | `verify-receipt-unavailable-21005` | status 21005: the receipt server is unavailable | yes | no |
/// | `verify-receipt-internal-21009` | status 21009: internal data access error | yes | no |
/// | `verify-receipt-account-not-found-21010` | status 21010: the account was not found or was deleted | no | no |
/// | `verify-receipt-data-access-211xx` | status 21100–21199: internal data access errors | yes | no |
/// | `verify-receipt-reroute-loop` | 21007/21008 again after rerouting (Apple's environments disagree) | yes | no |
/// | `verify-receipt-unknown-status` | any other non-zero status (retryable when `is-retryable` is true) | no | no |
/// | `verify-receipt-bundle-id-mismatch` | the receipt's `bundle_id` is not a configured bundle id | no | no |
/// | `verify-receipt-http-unavailable` | HTTP 429 or 5xx from the endpoint | yes | no |
/// | `verify-receipt-http-rejected` | any other non-200 HTTP status | no | no |
/// | `verify-receipt-invalid-response` | a 200 whose body is not the documented JSON | yes | no |
/// | `verify-receipt-invalid-request` | refused locally: empty or non-base64 `receipt-data` | no | no |
/// | `network-timeout` | no complete response within the request timeout | yes | no |
/// | `network-error` | connection refused, reset or dropped without a reply; DNS failure | yes | no |
/// | `network-tls-failure` | TLS handshake or certificate verification failed | no | yes |
/// | `network-client-error` | the HTTP client refused the request (bad URL, response too large) | no | no |
/// | `request-cancelled` | the calling task was cancelled or the client shut down mid-request | yes | no |
///
/// Statuses 21007 and 21008 are not failures: the client reroutes them immediately. Status 21006
/// (a valid receipt with an expired iOS 6-style subscription) is a success.
public struct AppStoreFailureReason: Sendable, Hashable, CustomStringConvertible {
    private enum Backing: String, Sendable, Hashable, CaseIterable {
        case apiUnauthorized = "appstore-api-unauthorized"
        case apiRateLimited = "appstore-api-rate-limited"
        case apiUnavailable = "appstore-api-unavailable"
        case apiNotFoundRetryable = "appstore-api-not-found-retryable"
        case apiTransactionNotFound = "appstore-api-transaction-not-found"
        case apiNotFound = "appstore-api-not-found"
        case apiBadRequest = "appstore-api-bad-request"
        case apiRequestRejected = "appstore-api-request-rejected"
        case apiInvalidResponse = "appstore-api-invalid-response"
        case apiInvalidRequest = "appstore-api-invalid-request"
        case apiSigningFailed = "appstore-api-signing-failed"
        case receiptUnreadable = "verify-receipt-unreadable-21000"
        case receiptMalformed = "verify-receipt-malformed-21002"
        case receiptUnauthenticated = "verify-receipt-unauthenticated-21003"
        case receiptSharedSecret = "verify-receipt-shared-secret-21004"
        case receiptUnavailable = "verify-receipt-unavailable-21005"
        case receiptInternal = "verify-receipt-internal-21009"
        case receiptAccountNotFound = "verify-receipt-account-not-found-21010"
        case receiptDataAccess = "verify-receipt-data-access-211xx"
        case receiptRerouteLoop = "verify-receipt-reroute-loop"
        case receiptUnknownStatus = "verify-receipt-unknown-status"
        case receiptBundleIdMismatch = "verify-receipt-bundle-id-mismatch"
        case receiptHTTPUnavailable = "verify-receipt-http-unavailable"
        case receiptHTTPRejected = "verify-receipt-http-rejected"
        case receiptInvalidResponse = "verify-receipt-invalid-response"
        case receiptInvalidRequest = "verify-receipt-invalid-request"
        case networkTimeout = "network-timeout"
        case networkError = "network-error"
        case networkTLSFailure = "network-tls-failure"
        case networkClientError = "network-client-error"
        case requestCancelled = "request-cancelled"
    }

    private let backing: Backing

    private init(_ backing: Backing) {
        self.backing = backing
    }

    /// The reason for a code string, or `nil` for an unknown code (e.g. read back from a header).
    /// - Parameter code: A code as returned by ``code``.
    public init?(code: String) {
        guard let backing = Backing(rawValue: code) else { return nil }
        self.backing = backing
    }

    /// The stable kebab-case code, e.g. `appstore-api-rate-limited`.
    public var code: String { backing.rawValue }

    /// The code, so interpolation prints it.
    public var description: String { backing.rawValue }

    /// The table's default: whether a later attempt may succeed. *Bounded* codes answer `true`
    /// here; the error's own `isRetryable` applies the attempt limit.
    public var isRetryable: Bool {
        switch backing {
        case .apiRateLimited, .apiUnavailable, .apiNotFoundRetryable, .apiTransactionNotFound, .apiInvalidResponse,
             .receiptMalformed, .receiptUnavailable, .receiptInternal, .receiptDataAccess, .receiptRerouteLoop,
             .receiptHTTPUnavailable, .receiptInvalidResponse, .networkTimeout, .networkError, .requestCancelled:
            true
        default:
            false
        }
    }

    /// Whether the failure means the deployment is misconfigured (credentials, shared secret, TLS
    /// trust) rather than anything about the purchase: alert, do not reject the customer's purchase.
    public var isConfigurationAlarm: Bool {
        switch backing {
        case .apiUnauthorized, .apiSigningFailed, .receiptUnreadable, .receiptSharedSecret, .networkTLSFailure: true
        default: false
        }
    }

    /// `appstore-api-unauthorized`: HTTP 401.
    public static let apiUnauthorized = Self(.apiUnauthorized)
    /// `appstore-api-rate-limited`: HTTP 429 / `4290000`.
    public static let apiRateLimited = Self(.apiRateLimited)
    /// `appstore-api-unavailable`: HTTP 5xx, `5000000`, `5000001`.
    public static let apiUnavailable = Self(.apiUnavailable)
    /// `appstore-api-not-found-retryable`: `4040002`, `4040004`, `4040006`.
    public static let apiNotFoundRetryable = Self(.apiNotFoundRetryable)
    /// `appstore-api-transaction-not-found`: `4040010` in both environments (bounded).
    public static let apiTransactionNotFound = Self(.apiTransactionNotFound)
    /// `appstore-api-not-found`: any other 404.
    public static let apiNotFound = Self(.apiNotFound)
    /// `appstore-api-bad-request`: HTTP 400.
    public static let apiBadRequest = Self(.apiBadRequest)
    /// `appstore-api-request-rejected`: any other 4xx.
    public static let apiRequestRejected = Self(.apiRequestRejected)
    /// `appstore-api-invalid-response`: a 2xx body that is not the documented JSON.
    public static let apiInvalidResponse = Self(.apiInvalidResponse)
    /// `appstore-api-invalid-request`: refused before sending.
    public static let apiInvalidRequest = Self(.apiInvalidRequest)
    /// `appstore-api-signing-failed`: the bearer JWT could not be signed.
    public static let apiSigningFailed = Self(.apiSigningFailed)
    /// `verify-receipt-unreadable-21000`.
    public static let receiptUnreadable = Self(.receiptUnreadable)
    /// `verify-receipt-malformed-21002` (bounded).
    public static let receiptMalformed = Self(.receiptMalformed)
    /// `verify-receipt-unauthenticated-21003`.
    public static let receiptUnauthenticated = Self(.receiptUnauthenticated)
    /// `verify-receipt-shared-secret-21004`.
    public static let receiptSharedSecret = Self(.receiptSharedSecret)
    /// `verify-receipt-unavailable-21005`.
    public static let receiptUnavailable = Self(.receiptUnavailable)
    /// `verify-receipt-internal-21009`.
    public static let receiptInternal = Self(.receiptInternal)
    /// `verify-receipt-account-not-found-21010`.
    public static let receiptAccountNotFound = Self(.receiptAccountNotFound)
    /// `verify-receipt-data-access-211xx`: statuses 21100–21199.
    public static let receiptDataAccess = Self(.receiptDataAccess)
    /// `verify-receipt-reroute-loop`: 21007/21008 after a reroute.
    public static let receiptRerouteLoop = Self(.receiptRerouteLoop)
    /// `verify-receipt-unknown-status`: an undocumented status.
    public static let receiptUnknownStatus = Self(.receiptUnknownStatus)
    /// `verify-receipt-bundle-id-mismatch`: the receipt belongs to another app.
    public static let receiptBundleIdMismatch = Self(.receiptBundleIdMismatch)
    /// `verify-receipt-http-unavailable`: HTTP 429 or 5xx.
    public static let receiptHTTPUnavailable = Self(.receiptHTTPUnavailable)
    /// `verify-receipt-http-rejected`: another non-200 status.
    public static let receiptHTTPRejected = Self(.receiptHTTPRejected)
    /// `verify-receipt-invalid-response`: a 200 body that is not the documented JSON.
    public static let receiptInvalidResponse = Self(.receiptInvalidResponse)
    /// `verify-receipt-invalid-request`: refused before sending.
    public static let receiptInvalidRequest = Self(.receiptInvalidRequest)
    /// `network-timeout`.
    public static let networkTimeout = Self(.networkTimeout)
    /// `network-error`.
    public static let networkError = Self(.networkError)
    /// `network-tls-failure`.
    public static let networkTLSFailure = Self(.networkTLSFailure)
    /// `network-client-error`.
    public static let networkClientError = Self(.networkClientError)
    /// `request-cancelled`.
    public static let requestCancelled = Self(.requestCancelled)

    /// Every reason, in table order.
    public static let allReasons: [AppStoreFailureReason] = Backing.allCases.map(AppStoreFailureReason.init)
}

/// A classified failure of an online App Store request, whichever endpoint produced it, so retry
/// policy (and the pipeline's transient/permanent split) needs one code path for both clients.
public protocol AppStoreRequestFailure: Error, Sendable {
    /// The stable classification.
    var reason: AppStoreFailureReason { get }
    /// Whether the same request may succeed later (bounded reasons already account for the attempt).
    var isRetryable: Bool { get }
    /// The earliest instant Apple allows the next request, when it said so (`Retry-After`).
    var retryAfter: Date? { get }
}

extension AppStoreRequestFailure {
    /// Whether no retry can fix this and the deployment's credentials or trust are wrong.
    public var isConfigurationAlarm: Bool { reason.isConfigurationAlarm }
}

extension AppStoreFailureReason {
    /// The reason for a transport failure of either client.
    /// - Parameter error: What the transport threw.
    /// - Returns: `network-*`, or `request-cancelled` for cancellation and client shutdown.
    static func transport(_ error: any Error) -> AppStoreFailureReason {
        guard let http = error as? HTTPError else {
            return error is CancellationError ? .requestCancelled : .networkError
        }
        switch http.code {
        case .timeout: return .networkTimeout
        case .connectionFailed, .connectionReset, .dnsFailure: return .networkError
        case .tls: return .networkTLSFailure
        case .shutdown: return .requestCancelled
        default: return .networkClientError
        }
    }
}
