import Foundation
import HTTP
import Testing
@testable import AppStore

/// The legacy `verifyReceipt` client over a stub: request body, immediate 21007/21008 reroutes,
/// every status class, and transaction extraction.
@Suite struct ServerAPIVerifyReceiptTests {
    static let production = "https://buy.example.test/verifyReceipt"
    static let sandbox = "https://sandbox.example.test/verifyReceipt"

    static func client(_ stub: StubTransport, secret: String? = "s3cret",
                       configure: (inout VerifyReceiptConfiguration) -> Void = { _ in }) throws -> VerifyReceiptClient {
        var configuration = VerifyReceiptConfiguration()
        configuration.productionURL = production
        configuration.sandboxURL = sandbox
        configure(&configuration)
        return try VerifyReceiptClient(configuration: configuration, sharedSecret: secret, transport: stub,
                                       clock: TestClock.fixed)
    }

    static func status(_ code: Int, extra: String = "") -> HTTPResponse {
        ServerAPIFixture.json("{\"status\":\(code)\(extra)}")
    }

    static let okBody = """
        {"status":0,"environment":"Sandbox","receipt":{"bundle_id":"com.example.app","application_version":"7",
         "in_app":[{"quantity":"2","product_id":"coins","transaction_id":"10","original_transaction_id":"10",
                    "purchase_date_ms":"1700000000000","in_app_ownership_type":"PURCHASED"},
                   {"quantity":"1","product_id":"sub","transaction_id":"20","original_transaction_id":"20",
                    "purchase_date_ms":"1700000100000","expires_date_ms":"1702592100000"}]},
         "latest_receipt_info":[{"quantity":"1","product_id":"sub","transaction_id":"21","original_transaction_id":"20",
                    "purchase_date_ms":"1702592100000","expires_date_ms":"1705270500000","cancellation_date_ms":"1703000000000",
                    "cancellation_reason":"0","is_trial_period":"false","web_order_line_item_id":"99"},
                   {"quantity":"1","product_id":"sub","transaction_id":"20","original_transaction_id":"20",
                    "purchase_date_ms":"1700000100000","expires_date_ms":"1702592100000"}],
         "pending_renewal_info":[{"auto_renew_product_id":"sub","product_id":"sub","original_transaction_id":"20",
                    "auto_renew_status":"0","expiration_intent":"1"}],
         "latest_receipt":"QUJD","is-retryable":false}
        """

    @Test func sandboxReceiptIsReroutedImmediatelyAndDecoded() async throws {
        let stub = StubTransport { request in
            request.url == Self.production ? Self.status(21007) : ServerAPIFixture.json(Self.okBody)
        }
        let result = try await Self.client(stub) { $0.excludeOldTransactions = true }.verify(receiptData: "QU JD\nRA==")
        #expect(stub.requests.map(\.url) == [Self.production, Self.sandbox])
        let body = try #require(try JSONSerialization.jsonObject(with: Data(stub.requests[0].body)) as? [String: Any])
        #expect(body["receipt-data"] as? String == "QUJDRA==", "whitespace removed")
        #expect(body["password"] as? String == "s3cret")
        #expect(body["exclude-old-transactions"] as? Bool == true)
        #expect(stub.requests[0].method == .post)
        #expect(stub.requests[0].headers["Content-Type"] == "application/json")

        #expect(result.status == 0)
        #expect(result.environment == .sandbox)
        #expect(result.rawEnvironment == "Sandbox")
        #expect(result.bundleId == "com.example.app")
        #expect(result.applicationVersion == "7")
        #expect(result.inApp.count == 2)
        #expect(result.latestReceiptInfo.count == 2)
        #expect(result.latestReceipt == "QUJD")
        #expect(result.transactions.map(\.transactionId) == ["10", "20", "21"])
        let coins = result.transactions[0]
        #expect(coins.quantity == 2 && coins.productId == "coins" && coins.inAppOwnershipType == "PURCHASED")
        #expect(coins.purchaseDate == Date(timeIntervalSince1970: 1_700_000_000))
        let renewal = result.transactions[2]
        #expect(renewal.originalTransactionId == "20")
        #expect(renewal.expiresDateMs == "1705270500000")
        #expect(renewal.cancellationDate == Date(timeIntervalSince1970: 1_703_000_000))
        #expect(renewal.cancellationReason == "0" && renewal.webOrderLineItemId == "99" && renewal.isTrialPeriod == "false")
        #expect(result.pendingRenewalInfo.first?.autoRenewStatus == "0")
        #expect(result.pendingRenewalInfo.first?.expirationIntent == "1")
    }

    @Test func productionReceiptAtSandboxGoesBackToProduction() async throws {
        var configuration = VerifyReceiptConfiguration()
        configuration.productionURL = Self.production
        configuration.sandboxURL = Self.sandbox
        // 21007 then 21008: the environments disagree; no third request and no backoff.
        let stub = StubTransport { request in request.url == Self.production ? Self.status(21007) : Self.status(21008) }
        let client = try VerifyReceiptClient(configuration: configuration, sharedSecret: nil, transport: stub)
        let error = try #require(await ServerAPIFixture.receiptFailure { _ = try await client.verify(receiptData: "QUJD") })
        #expect(error.reason.code == "verify-receipt-reroute-loop")
        #expect(error.isRetryable)
        #expect(error.status == 21008)
        #expect(stub.requests.count == 2)
        let body = String(decoding: stub.requests[0].body, as: UTF8.self)
        #expect(!body.contains("password"), "no shared secret configured, none sent")
    }

    @Test func expiredIOS6ReceiptIsASuccess() async throws {
        let stub = StubTransport(sequence: [Self.status(21006, extra: ",\"receipt\":{\"bundle_id\":\"com.example.app\",\"in_app\":[]}")])
        let result = try await Self.client(stub).verify(receiptData: "QUJD")
        #expect(result.status == 21006)
        #expect(result.environment == .production)
    }

    struct StatusCase: Sendable, CustomStringConvertible {
        var status: Int
        var extra = ""
        var attempt = 1
        var code: String
        var retryable: Bool
        var alarm = false
        var description: String { "\(status) attempt \(attempt)\(extra)" }
    }

    @Test(arguments: [
        StatusCase(status: 21000, code: "verify-receipt-unreadable-21000", retryable: false, alarm: true),
        StatusCase(status: 21002, attempt: 1, code: "verify-receipt-malformed-21002", retryable: true),
        StatusCase(status: 21002, attempt: 2, code: "verify-receipt-malformed-21002", retryable: false),
        StatusCase(status: 21003, code: "verify-receipt-unauthenticated-21003", retryable: false),
        StatusCase(status: 21004, code: "verify-receipt-shared-secret-21004", retryable: false, alarm: true),
        StatusCase(status: 21005, code: "verify-receipt-unavailable-21005", retryable: true),
        StatusCase(status: 21009, code: "verify-receipt-internal-21009", retryable: true),
        StatusCase(status: 21010, code: "verify-receipt-account-not-found-21010", retryable: false),
        StatusCase(status: 21100, code: "verify-receipt-data-access-211xx", retryable: true),
        StatusCase(status: 21199, extra: ",\"is-retryable\":false", code: "verify-receipt-data-access-211xx", retryable: true),
        StatusCase(status: 21150, extra: ",\"is-retryable\":1", code: "verify-receipt-data-access-211xx", retryable: true),
        StatusCase(status: 21099, code: "verify-receipt-unknown-status", retryable: false),
        StatusCase(status: 21099, extra: ",\"is-retryable\":true", code: "verify-receipt-unknown-status", retryable: true),
        StatusCase(status: 21002, extra: ",\"is-retryable\":true", attempt: 5, code: "verify-receipt-malformed-21002",
                   retryable: true),
    ])
    func statusesAreClassified(_ testCase: StatusCase) async throws {
        let stub = StubTransport(sequence: [Self.status(testCase.status, extra: testCase.extra)])
        let client = try Self.client(stub)
        let error = try #require(await ServerAPIFixture.receiptFailure {
            _ = try await client.verify(receiptData: "QUJD", attempt: testCase.attempt)
        })
        #expect(error.reason.code == testCase.code)
        #expect(error.isRetryable == testCase.retryable)
        #expect(error.isConfigurationAlarm == testCase.alarm)
        #expect(error.status == testCase.status)
        #expect(error.environment == .production)
        #expect(stub.requests.count == 1, "no retries inside the client")
        #expect(!error.description.contains("s3cret"))
    }

    @Test(arguments: [
        (HTTPResponse(status: 503, headers: ["Retry-After": "1735689660250"]), "verify-receipt-http-unavailable", true),
        (HTTPResponse(status: 429), "verify-receipt-http-unavailable", true),
        (HTTPResponse(status: 404), "verify-receipt-http-rejected", false),
        (HTTPResponse(status: 200, body: Array("<html>".utf8)), "verify-receipt-invalid-response", true),
        (ServerAPIFixture.json("{\"environment\":\"Sandbox\"}"), "verify-receipt-invalid-response", true),
        (ServerAPIFixture.json("{\"status\":0,\"receipt\":{\"in_app\":[{\"product_id\":\"p\"}]}}"),
         "verify-receipt-invalid-response", true),
        (ServerAPIFixture.json("{\"status\":0,\"receipt\":{\"in_app\":[{\"product_id\":\"p\",\"transaction_id\":\"1\",\"purchase_date_ms\":\"soon\"}]}}"),
         "verify-receipt-invalid-response", true),
    ])
    func httpAndBodyFailuresAreClassified(_ response: HTTPResponse, _ code: String, _ retryable: Bool) async throws {
        let error = try #require(await ServerAPIFixture.receiptFailure {
            _ = try await Self.client(StubTransport(sequence: [response])).verify(receiptData: "QUJD")
        })
        #expect(error.reason.code == code)
        #expect(error.isRetryable == retryable)
        if response.status == 503 { #expect(error.retryAfter == Date(timeIntervalSince1970: 1_735_689_660.25)) }
    }

    @Test func transportFailuresUseTheSharedNetworkCodes() async throws {
        let client = try Self.client(StubTransport { _ in throw HTTPError(code: .timeout, message: "slow") })
        let error = try #require(await ServerAPIFixture.receiptFailure { _ = try await client.verify(receiptData: "QUJD") })
        #expect(error.reason == .networkTimeout && error.isRetryable)
    }

    @Test func foreignBundleIsRejected() async throws {
        let stub = StubTransport(sequence: [ServerAPIFixture.json(Self.okBody)])
        let client = try Self.client(stub) { $0.bundleIds = ["com.mine"] }
        let error = try #require(await ServerAPIFixture.receiptFailure { _ = try await client.verify(receiptData: "QUJD") })
        #expect(error.reason.code == "verify-receipt-bundle-id-mismatch")
        #expect(!error.isRetryable)
    }

    @Test(arguments: ["", "  \n", "not base64!", String(repeating: "A", count: 65)])
    func invalidReceiptDataIsRefusedLocally(_ data: String) async throws {
        let stub = StubTransport(sequence: [Self.status(0)])
        let client = try Self.client(stub) { $0.maxReceiptDataBytes = 64 }
        let error = try #require(await ServerAPIFixture.receiptFailure { _ = try await client.verify(receiptData: data) })
        #expect(error.reason.code == "verify-receipt-invalid-request")
        #expect(stub.requests.isEmpty)
    }

    @Test func sharedSecretIsReadFromItsFile() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)").path
        try Data("  abc123\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = VerifyReceiptConfiguration()
        configuration.sharedSecretPath = path
        #expect(try configuration.loadSharedSecret() == "abc123")
        #expect(!configuration.description.contains("abc123"))
        configuration.sharedSecretPath = path + ".missing"
        #expect(throws: AppStoreConfigurationError.self) { _ = try configuration.loadSharedSecret() }
        #expect(VerifyReceiptConfiguration().productionURL == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(VerifyReceiptConfiguration().sandboxURL == "https://sandbox.itunes.apple.com/verifyReceipt")
    }
}
