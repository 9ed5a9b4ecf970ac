import Foundation
import HTTP

/// A client for the App Store Server API endpoints that prove a purchase: Get Transaction Info,
/// Get Transaction History (v2) and Get All Subscription Statuses.
///
/// ```swift
/// let http = try CurlHTTPClient()
/// let api = try AppStoreServerAPIClient(configuration: configuration, transport: http)
/// let info = try await api.getTransactionInfo(transactionId: "2000000123456789")
/// let transaction = try info.verifiedTransaction(using: verifier).get()
/// ```
///
/// Every request carries a cached ES256 bearer token (``AppStoreBearerTokenProvider``) and goes
/// through an ``HTTPTransport``: ``CurlHTTPClient`` in production (HTTP/2, many requests in flight
/// on few connections), a stub in tests. Failures are thrown as ``AppStoreServerAPIError`` with a
/// stable ``AppStoreFailureReason`` and a retry answer; the client itself never sleeps or retries,
/// because the pipeline's retry tiers own backoff (and must see every attempt).
///
/// `4040010` (transaction id not found) is the one answer handled inside: the same request goes to
/// the other environment at once (a sandbox id asked in production), and if that also fails the
/// error stays retryable until the caller's `attempt` reaches
/// ``AppStoreServerAPIConfiguration/transactionNotFoundAttempts``.
///
/// Signed data in responses is returned raw; verify it with a ``SignedDataVerifier`` (each response
/// type has a `verified…(using:)` convenience).
///
/// - Important: `Sendable`; share one client across tasks.
public final class AppStoreServerAPIClient: Sendable {
    /// The validated configuration.
    public let configuration: AppStoreServerAPIConfiguration
    /// The bearer token cache.
    public let tokens: AppStoreBearerTokenProvider
    private let transport: any HTTPTransport
    private let clock: @Sendable () -> Date
    /// The per-endpoint budget every request waits for (nil: none).
    public let requestLimiter: (any AppStoreRequestLimiter)?
    private let metrics: AppStoreRequestMetrics?

    /// Creates a client, reading the signing key from ``AppStoreServerAPIConfiguration/signingKeyPath``.
    /// - Parameters:
    ///   - configuration: Credentials, endpoints, timeouts.
    ///   - transport: The HTTP client (``CurlHTTPClient`` in production).
    ///   - clock: The current time, for token claims and `Retry-After` deltas.
    ///   - metrics: Where requests, latencies and failures are counted (nil: nowhere).
    /// - Throws: ``AppStoreConfigurationError`` for invalid settings or an unusable key file.
    public convenience init(configuration: AppStoreServerAPIConfiguration, transport: any HTTPTransport,
                            requestLimiter: (any AppStoreRequestLimiter)? = nil,
                            clock: @escaping @Sendable () -> Date = Date.init,
                            metrics: AppStoreRequestMetrics? = nil) throws(AppStoreConfigurationError) {
        try configuration.validate()
        let signer = try AppStoreJWTSigner.load(path: configuration.signingKeyPath)
        try self.init(configuration: configuration, signer: signer, transport: transport, requestLimiter: requestLimiter,
                      clock: clock, metrics: metrics)
    }

    /// Creates a client with an already loaded key (tests, the fake App Store tooling).
    /// - Parameters:
    ///   - configuration: Credentials, endpoints, timeouts (``AppStoreServerAPIConfiguration/signingKeyPath`` is not read).
    ///   - signer: The signing key.
    ///   - transport: The HTTP client.
    ///   - clock: The current time.
    /// - Throws: ``AppStoreConfigurationError`` for invalid settings.
    public init(configuration: AppStoreServerAPIConfiguration, signer: AppStoreJWTSigner, transport: any HTTPTransport,
                requestLimiter: (any AppStoreRequestLimiter)? = nil,
                clock: @escaping @Sendable () -> Date = Date.init,
                metrics: AppStoreRequestMetrics? = nil) throws(AppStoreConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.metrics = metrics
        self.transport = transport
        self.requestLimiter = requestLimiter
        self.clock = clock
        self.tokens = AppStoreBearerTokenProvider(
            signer: signer, keyId: configuration.keyId, issuerId: configuration.issuerId, bundleId: configuration.bundleId,
            lifetime: configuration.tokenLifetime, refreshMargin: configuration.tokenRefreshMargin, clock: clock)
    }

    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
    /// - Parameters:
    ///   - transactionId: Any transaction id of the customer's purchase.
    ///   - attempt: This call's attempt number (1 for the first), which bounds `4040010` retries.
    /// - Returns: The signed transaction and the environment that had it.
    /// - Throws: ``AppStoreServerAPIError``.
    public func getTransactionInfo(transactionId: String, attempt: Int = 1) async throws(AppStoreServerAPIError)
        -> TransactionInfoResponse {
        let (body, environment) = try await send(path: "/inApps/v1/transactions/", id: transactionId, query: [],
                                                 environment: nil, attempt: attempt)
        return try TransactionInfoResponse(body: body, environment: environment)
    }

    /// Get Transaction History (v2): `GET /inApps/v2/history/{transactionId}[?revision=…]`, one page.
    /// - Parameters:
    ///   - transactionId: Any transaction id of the customer.
    ///   - revision: The previous page's ``HistoryResponse/revision``; `nil` for the first page.
    ///   - environment: The environment to ask (pass the previous page's); `nil` starts with the
    ///     configured one and falls back on `4040010`.
    ///   - attempt: This call's attempt number, which bounds `4040010` retries.
    /// - Returns: One page of up to 20 signed transactions.
    /// - Throws: ``AppStoreServerAPIError``.
    public func getTransactionHistory(transactionId: String, revision: String? = nil,
                                      environment: AppStoreEnvironment? = nil,
                                      attempt: Int = 1) async throws(AppStoreServerAPIError) -> HistoryResponse {
        let query = revision.map { [("revision", $0)] } ?? []
        let (body, answered) = try await send(path: "/inApps/v2/history/", id: transactionId, query: query,
                                              environment: environment, attempt: attempt)
        return try HistoryResponse(body: body, environment: answered)
    }

    /// Every page of the customer's history, following `revision` while `hasMore` is true (at most
    /// ``AppStoreServerAPIConfiguration/maxHistoryPages`` pages).
    /// - Parameters:
    ///   - transactionId: Any transaction id of the customer.
    ///   - attempt: This call's attempt number.
    /// - Returns: The pages in order.
    /// - Throws: ``AppStoreServerAPIError``; a response that keeps `hasMore` beyond the page bound
    ///   is `appstore-api-invalid-response`.
    public func getAllTransactionHistory(transactionId: String, attempt: Int = 1) async throws(AppStoreServerAPIError)
        -> [HistoryResponse] {
        var pages = [try await getTransactionHistory(transactionId: transactionId, attempt: attempt)]
        while let last = pages.last, last.hasMore {
            guard pages.count < configuration.maxHistoryPages else {
                throw ServerAPIJSON.invalid("more than \(configuration.maxHistoryPages) history pages", last.environment)
            }
            pages.append(try await getTransactionHistory(transactionId: transactionId, revision: last.revision,
                                                         environment: last.environment, attempt: attempt))
        }
        return pages
    }

    /// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}`.
    /// - Parameters:
    ///   - transactionId: Any transaction id of the customer's subscription.
    ///   - attempt: This call's attempt number, which bounds `4040010` retries.
    /// - Returns: The statuses by subscription group.
    /// - Throws: ``AppStoreServerAPIError``.
    public func getAllSubscriptionStatuses(transactionId: String, attempt: Int = 1) async throws(AppStoreServerAPIError)
        -> StatusResponse {
        let (body, environment) = try await send(path: "/inApps/v1/subscriptions/", id: transactionId, query: [],
                                                 environment: nil, attempt: attempt)
        return try StatusResponse(body: body, environment: environment)
    }

    // MARK: - Exchange

    /// Sends one logical request: the configured (or given) environment first and, on `4040010`
    /// without an explicit environment, the other one; then bounds the not-found retries.
    private func send(path: String, id: String, query: [(String, String)], environment: AppStoreEnvironment?,
                      attempt: Int) async throws(AppStoreServerAPIError) -> ([UInt8], AppStoreEnvironment) {
        do {
            return try await sendWithFallback(path: path, id: id, query: query, environment: environment, attempt: attempt)
        } catch {
            // The call's outcome, once: a production 4040010 answered from Sandbox is no failure.
            if let endpoint = AppStoreEndpoint(method: .get, path: path) {
                metrics?.failure(endpoint, environment: error.environment, reason: error.reason)
            }
            throw error
        }
    }

    private func sendWithFallback(path: String, id: String, query: [(String, String)], environment: AppStoreEnvironment?,
                                  attempt: Int) async throws(AppStoreServerAPIError) -> ([UInt8], AppStoreEnvironment) {
        let first = environment ?? configuration.environment
        guard Self.isValidTransactionId(id) else {
            throw AppStoreServerAPIError(reason: .apiInvalidRequest, environment: first,
                                         detail: "transaction id must be 1-64 ASCII letters or digits")
        }
        let relative = path + id + Self.queryString(query)
        do {
            return (try await exchange(relative, environment: first), first)
        } catch let error where error.reason == .apiTransactionNotFound {
            var last = error
            if environment == nil && configuration.tryOtherEnvironmentOnNotFound {
                let other: AppStoreEnvironment = first == .production ? .sandbox : .production
                do {
                    return (try await exchange(relative, environment: other), other)
                } catch let second where second.reason == .apiTransactionNotFound {
                    last = second
                }
            }
            let retryable = attempt < configuration.transactionNotFoundAttempts
            throw last.with(isRetryable: retryable, detail: "transaction id not found"
                + (environment == nil && configuration.tryOtherEnvironmentOnNotFound ? " in either environment" : "")
                + " (attempt \(attempt) of \(configuration.transactionNotFoundAttempts))")
        }
    }

    /// One HTTP exchange with one environment; the body of a 2xx, else the classified error.
    /// With a ``requestLimiter`` the request first waits for its endpoint's budget, and a 429's
    /// `Retry-After` pauses the endpoint for every request of this client.
    func exchange(_ relative: String, environment: AppStoreEnvironment, method: HTTPMethod = .get,
                  body: [UInt8] = []) async throws(AppStoreServerAPIError) -> [UInt8] {
        let endpoint = AppStoreEndpoint(method: method, path: relative)
        var ticket: UInt64?
        if let requestLimiter, let endpoint {
            switch await requestLimiter.admit(endpoint) {
            case .admitted(let admitted): ticket = admitted
            case .deferred(let until):
                throw AppStoreServerAPIError(reason: .apiRateLimited, environment: environment, retryAfter: until,
                                             detail: "\(endpoint.rawValue) budget exhausted; not sent")
            }
        }
        defer { if let ticket, let endpoint { requestLimiter?.finish(endpoint, ticket: ticket) } }
        let token: String
        do {
            token = try tokens.token()
        } catch {
            throw AppStoreServerAPIError(reason: .apiSigningFailed, environment: environment,
                                         detail: "cannot sign the bearer token: \(error)")
        }
        var headers: HTTPHeaders = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        if !body.isEmpty { headers["Content-Type"] = "application/json" }
        let request = HTTPRequest(method: method, url: configuration.baseURL(for: environment) + relative,
                                  headers: headers, body: body)
        let response: HTTPResponse
        let started = ContinuousClock.now
        do {
            response = try await transport.execute(request, timeout: configuration.requestTimeout)
        } catch {
            if let endpoint { metrics?.request(endpoint, environment: environment, status: nil, elapsed: started.duration(to: .now)) }
            throw AppStoreServerAPIError.transport(error, environment: environment)
        }
        if let endpoint {
            metrics?.request(endpoint, environment: environment, status: response.status, elapsed: started.duration(to: .now))
        }
        guard response.isSuccess else {
            if response.status == 401 { tokens.invalidate() }
            let error = AppStoreServerAPIError.classify(response, environment: environment, now: clock())
            if response.status == 429, let endpoint, let requestLimiter {
                requestLimiter.pause(endpoint, until: error.retryAfter ?? clock().addingTimeInterval(1))
            }
            throw error
        }
        return response.body
    }

    /// Transaction ids are decimal strings; anything that could alter the path is refused.
    static func isValidTransactionId(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        }
    }

    /// `?name=value&…` with RFC 3986 unreserved characters kept and everything else percent-encoded
    /// (revision tokens may contain `+`, `/` and `=`).
    static func queryString(_ items: [(String, String)]) -> String {
        guard !items.isEmpty else { return "" }
        func encode(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                     UInt8(ascii: "~"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    let hex = String(byte, radix: 16, uppercase: true)
                    out += "%" + (hex.count == 1 ? "0" + hex : hex)
                }
            }
            return out
        }
        return "?" + items.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }
}
