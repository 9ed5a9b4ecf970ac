import Foundation
import Observability
import HTTP

/// A client for Apple's legacy `verifyReceipt` endpoint, for StoreKit 1 app receipts.
///
/// ```swift
/// let client = try VerifyReceiptClient(configuration: configuration, transport: try CurlHTTPClient())
/// let result = try await client.verify(receiptData: base64Receipt)
/// for transaction in result.transactions { … }
/// ```
///
/// The flow is Apple's: POST `{"receipt-data", "password", "exclude-old-transactions"}` to
/// production first; status 21007 (a sandbox receipt) is sent to sandbox and 21008 (a production
/// receipt) to production, immediately and without backoff, because they are routing answers,
/// not failures. A second bounce (the environments disagree) is `verify-receipt-reroute-loop`.
/// Every other non-zero status is thrown as a classified ``VerifyReceiptError``; the client never
/// sleeps or retries on its own, so the caller's retry tiers see every attempt.
///
/// - Important: `Sendable`. The shared secret is held privately and never appears in errors,
///   descriptions or logs.
public final class VerifyReceiptClient: Sendable {
    /// The validated configuration.
    public let configuration: VerifyReceiptConfiguration
    private let sharedSecret: String?
    private let transport: any HTTPTransport
    private let clock: @Sendable () -> Date
    private let metrics: AppStoreRequestMetrics?

    /// Creates a client, reading the shared secret from ``VerifyReceiptConfiguration/sharedSecretPath``.
    /// - Parameters:
    ///   - configuration: Endpoints, secret path, limits.
    ///   - transport: The HTTP client (``CurlHTTPClient`` in production).
    ///   - clock: The current time, for `Retry-After` deltas.
    ///   - metrics: Where requests, latencies and failures are counted (nil: nowhere).
    /// - Throws: ``AppStoreConfigurationError`` for invalid settings or an unreadable secret file.
    public convenience init(configuration: VerifyReceiptConfiguration, transport: any HTTPTransport,
                            clock: @escaping @Sendable () -> Date = Date.init,
                            metrics: AppStoreRequestMetrics? = nil) throws(AppStoreConfigurationError) {
        try configuration.validate()
        try self.init(configuration: configuration, sharedSecret: try configuration.loadSharedSecret(),
                      transport: transport, clock: clock, metrics: metrics)
    }

    /// Creates a client with the shared secret given directly (tests, tooling).
    /// - Parameters:
    ///   - configuration: Endpoints and limits (``VerifyReceiptConfiguration/sharedSecretPath`` is not read).
    ///   - sharedSecret: The secret sent as `password`, or `nil` for none.
    ///   - transport: The HTTP client.
    ///   - clock: The current time.
    ///   - metrics: Where requests, latencies and failures are counted (nil: nowhere).
    /// - Throws: ``AppStoreConfigurationError`` for invalid settings.
    public init(configuration: VerifyReceiptConfiguration, sharedSecret: String?, transport: any HTTPTransport,
                clock: @escaping @Sendable () -> Date = Date.init,
                metrics: AppStoreRequestMetrics? = nil) throws(AppStoreConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.metrics = metrics
        self.sharedSecret = sharedSecret
        self.transport = transport
        self.clock = clock
    }

    /// Verifies a base64 app receipt.
    /// - Parameters:
    ///   - receiptData: The base64 receipt (whitespace and line breaks are removed).
    ///   - attempt: This call's attempt number (1 for the first), which bounds 21002 retries.
    /// - Returns: The decoded receipt and its transactions.
    /// - Throws: ``VerifyReceiptError``.
    public func verify(receiptData: String, attempt: Int = 1) async throws(VerifyReceiptError) -> VerifyReceiptResult {
        do {
            return try await verifyUnrecorded(receiptData: receiptData, attempt: attempt)
        } catch {
            metrics?.failure(.verifyReceipt, environment: error.environment, reason: error.reason)
            throw error
        }
    }

    private func verifyUnrecorded(receiptData: String, attempt: Int) async throws(VerifyReceiptError) -> VerifyReceiptResult {
        let receipt = String(receiptData.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard !receipt.isEmpty, receipt.utf8.count <= configuration.maxReceiptDataBytes,
              receipt.utf8.allSatisfy(Self.isBase64Character) else {
            throw VerifyReceiptError(reason: .receiptInvalidRequest,
                                     detail: "receipt-data must be non-empty base64 of at most \(configuration.maxReceiptDataBytes) bytes")
        }
        let body = Array(requestJSON(receipt: receipt).utf8)
        var environment = AppStoreEnvironment.production
        var asked: [AppStoreEnvironment] = []
        while true {
            asked.append(environment)
            let envelope = try await post(body, environment: environment)
            switch envelope.status {
            case 0, 21006:
                let result: VerifyReceiptResult
                do throws(VerifyReceiptResponseDecoder.Invalid) {
                    result = try VerifyReceiptResponseDecoder.result(envelope, environment: environment)
                } catch {
                    throw VerifyReceiptError(reason: .receiptInvalidResponse, status: envelope.status, httpStatus: 200,
                                             environment: environment, detail: "response body: \(error.detail)")
                }
                try checkBundleId(result)
                return result
            case 21007, 21008:
                let target: AppStoreEnvironment = envelope.status == 21007 ? .sandbox : .production
                guard !asked.contains(target) else {
                    throw VerifyReceiptError(
                        reason: .receiptRerouteLoop, status: envelope.status, httpStatus: 200, environment: environment,
                        detail: "\(environment.rawValue) answered \(envelope.status) after "
                            + asked.map(\.rawValue).joined(separator: " -> "))
                }
                environment = target
            default:
                throw VerifyReceiptError.classify(status: envelope.status, appleIsRetryable: envelope.isRetryable,
                                                  environment: environment, attempt: attempt,
                                                  malformedAttempts: configuration.malformedAttempts)
            }
        }
    }

    /// One POST to one endpoint; the decoded envelope of an HTTP 200, else the classified error.
    private func post(_ body: [UInt8], environment: AppStoreEnvironment) async throws(VerifyReceiptError)
        -> VerifyReceiptResponseDecoder.Envelope {
        let url = environment == .sandbox ? configuration.sandboxURL : configuration.productionURL
        let request = HTTPRequest(method: .post, url: url,
                                  headers: ["Content-Type": "application/json", "Accept": "application/json"], body: body)
        let response: HTTPResponse
        let started = ContinuousClock.now
        do {
            response = try await transport.execute(request, timeout: configuration.requestTimeout)
            metrics?.request(.verifyReceipt, environment: environment, status: response.status,
                             elapsed: started.duration(to: .now))
        } catch {
            metrics?.request(.verifyReceipt, environment: environment, status: nil, elapsed: started.duration(to: .now))
            let detail = (error as? HTTPError)?.description ?? String(describing: type(of: error))
            throw VerifyReceiptError(reason: .transport(error), environment: environment, detail: detail)
        }
        guard response.status == 200 else {
            let unavailable = response.status == 429 || response.status >= 500
            let retryAfter = response.headers["Retry-After"].flatMap { AppStoreRetryAfter.parse($0, now: clock()) }
            throw VerifyReceiptError(reason: unavailable ? .receiptHTTPUnavailable : .receiptHTTPRejected,
                                     httpStatus: response.status, environment: environment,
                                     retryAfter: unavailable ? retryAfter : nil,
                                     detail: "verifyReceipt answered HTTP \(response.status)")
        }
        do throws(VerifyReceiptResponseDecoder.Invalid) {
            return try VerifyReceiptResponseDecoder.envelope(response.body)
        } catch {
            throw VerifyReceiptError(reason: .receiptInvalidResponse, httpStatus: 200, environment: environment,
                                     detail: "response body: \(error.detail)")
        }
    }

    private func checkBundleId(_ result: VerifyReceiptResult) throws(VerifyReceiptError) {
        guard !configuration.bundleIds.isEmpty else { return }
        guard let bundleId = result.bundleId, configuration.bundleIds.contains(bundleId) else {
            throw VerifyReceiptError(reason: .receiptBundleIdMismatch, status: result.status, httpStatus: 200,
                                     environment: result.environment,
                                     detail: "receipt.bundle_id is not one of the configured bundle ids")
        }
    }

    /// The request document; the secret goes only into this body, never anywhere else.
    private func requestJSON(receipt: String) -> String {
        var json = "{\"receipt-data\":\(JSONString.quoted(receipt))"
        if let sharedSecret { json += ",\"password\":\(JSONString.quoted(sharedSecret))" }
        return json + ",\"exclude-old-transactions\":\(configuration.excludeOldTransactions)}"
    }

    private static func isBase64Character(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
