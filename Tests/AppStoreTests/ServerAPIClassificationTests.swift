import Foundation
import HTTP
import Testing
@testable import AppStore

/// Every App Store Server API answer the client can get, through a stub transport, mapped to its
/// code, retry answer, alarm flag and `Retry-After`.
@Suite struct ServerAPIClassificationTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var response: HTTPResponse
        var code: String
        var retryable: Bool
        var alarm = false
        var description: String { name }
    }

    static let retryAt = Date(timeIntervalSince1970: 1_735_689_660.250)

    static let cases: [Case] = [
        Case(name: "401 without body", response: HTTPResponse(status: 401), code: "appstore-api-unauthorized",
             retryable: false, alarm: true),
        Case(name: "429 4290000", response: ServerAPIFixture.apiError(429, 4_290_000, headers: ["Retry-After": "1735689660250"]),
             code: "appstore-api-rate-limited", retryable: true),
        Case(name: "4040002", response: ServerAPIFixture.apiError(404, 4_040_002), code: "appstore-api-not-found-retryable",
             retryable: true),
        Case(name: "4040004", response: ServerAPIFixture.apiError(404, 4_040_004), code: "appstore-api-not-found-retryable",
             retryable: true),
        Case(name: "4040006", response: ServerAPIFixture.apiError(404, 4_040_006), code: "appstore-api-not-found-retryable",
             retryable: true),
        Case(name: "5000001", response: ServerAPIFixture.apiError(500, 5_000_001), code: "appstore-api-unavailable",
             retryable: true),
        Case(name: "5000000", response: ServerAPIFixture.apiError(500, 5_000_000), code: "appstore-api-unavailable",
             retryable: true),
        Case(name: "503 without body", response: HTTPResponse(status: 503), code: "appstore-api-unavailable", retryable: true),
        Case(name: "502 HTML", response: HTTPResponse(status: 502, body: Array("<html>".utf8)), code: "appstore-api-unavailable",
             retryable: true),
        Case(name: "4040001", response: ServerAPIFixture.apiError(404, 4_040_001), code: "appstore-api-not-found",
             retryable: false),
        Case(name: "4040005", response: ServerAPIFixture.apiError(404, 4_040_005), code: "appstore-api-not-found",
             retryable: false),
        Case(name: "400 4000006", response: ServerAPIFixture.apiError(400, 4_000_006), code: "appstore-api-bad-request",
             retryable: false),
        Case(name: "403", response: HTTPResponse(status: 403), code: "appstore-api-request-rejected", retryable: false),
        Case(name: "200 not JSON", response: HTTPResponse(status: 200, body: Array("oops".utf8)),
             code: "appstore-api-invalid-response", retryable: true),
        Case(name: "200 without signedTransactionInfo", response: ServerAPIFixture.json("{}"),
             code: "appstore-api-invalid-response", retryable: true),
    ]

    @Test(arguments: cases)
    func responseIsClassified(_ testCase: Case) async throws {
        let stub = StubTransport(sequence: [testCase.response])
        let client = try ServerAPIFixture.client(stub)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "42") })
        #expect(error.reason.code == testCase.code)
        #expect(error.isRetryable == testCase.retryable)
        #expect(error.isConfigurationAlarm == testCase.alarm)
        #expect(error.httpStatus == testCase.response.status)
        #expect(error.environment == .production)
        #expect(stub.requests.count == 1, "only 4040010 triggers a second request")
        if testCase.code == "appstore-api-rate-limited" {
            #expect(error.apiErrorCode == 4_290_000)
            #expect(error.retryAfter == Self.retryAt)
        }
    }

    @Test func retryAfterOnServerErrorsIsHonoured() async throws {
        let stub = StubTransport(sequence: [HTTPResponse(status: 503, headers: ["Retry-After": "30"])])
        let client = try ServerAPIFixture.client(stub)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "42") })
        #expect(error.reason == .apiUnavailable)
        #expect(error.retryAfter == TestClock.inside.addingTimeInterval(30))
    }

    @Test(arguments: [
        (HTTPError(code: .timeout, message: "t"), "network-timeout", true, false),
        (HTTPError(code: .connectionReset, message: "r"), "network-error", true, false),
        (HTTPError(code: .connectionFailed, message: "c"), "network-error", true, false),
        (HTTPError(code: .dnsFailure, message: "d"), "network-error", true, false),
        (HTTPError(code: .tls, message: "tls"), "network-tls-failure", false, true),
        (HTTPError(code: .tooLarge, message: "big"), "network-client-error", false, false),
        (HTTPError(code: .shutdown, message: "s"), "request-cancelled", true, false),
    ])
    func transportFailuresAreClassified(_ failure: HTTPError, _ code: String, _ retryable: Bool, _ alarm: Bool) async throws {
        let client = try ServerAPIFixture.client(StubTransport { _ in throw failure })
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "42") })
        #expect(error.reason.code == code)
        #expect(error.isRetryable == retryable)
        #expect(error.isConfigurationAlarm == alarm)
        #expect(error.httpStatus == nil)
    }

    @Test func cancellationIsRetryable() async throws {
        let client = try ServerAPIFixture.client(StubTransport { _ in throw CancellationError() })
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "42") })
        #expect(error.reason == .requestCancelled)
        #expect(error.isRetryable)
    }

    @Test(arguments: [
        ("1735689660250", Date(timeIntervalSince1970: 1_735_689_660.25)),           // Apple: UNIX milliseconds
        (" 1735689660250 ", Date(timeIntervalSince1970: 1_735_689_660.25)),
        ("1735689660", Date(timeIntervalSince1970: 1_735_689_660)),                 // UNIX seconds
        ("120", TestClock.inside.addingTimeInterval(120)),                          // delta-seconds
        ("0", TestClock.inside),
        ("Wed, 01 Jan 2025 00:01:00 GMT", Date(timeIntervalSince1970: 1_735_689_660)), // IMF-fixdate
    ])
    func retryAfterForms(_ value: String, _ expected: Date) {
        #expect(AppStoreRetryAfter.parse(value, now: TestClock.inside) == expected)
    }

    @Test(arguments: ["", "soon", "-5", "1.5", "12e3", "Wed, 01 Jan 2025 00:01:00 PST", "99999999999999999999999"])
    func retryAfterGarbageIsIgnored(_ value: String) {
        #expect(AppStoreRetryAfter.parse(value, now: TestClock.inside) == nil)
    }

    @Test func taxonomyCodesAreStableKebabCase() {
        let codes = AppStoreFailureReason.allReasons.map(\.code)
        #expect(Set(codes).count == codes.count)
        #expect(codes.count == 31)
        for code in codes {
            #expect(code.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" }, "\(code)")
            #expect(code.hasPrefix("appstore-api-") || code.hasPrefix("verify-receipt-") || code.hasPrefix("network-")
                    || code.hasPrefix("request-"))
            #expect(AppStoreFailureReason(code: code)?.code == code)
        }
        #expect(AppStoreFailureReason(code: "untrusted-root") == nil, "offline codes live in VerificationReason")
        let alarms = Set(AppStoreFailureReason.allReasons.filter(\.isConfigurationAlarm).map(\.code))
        #expect(alarms == ["appstore-api-unauthorized", "appstore-api-signing-failed", "verify-receipt-unreadable-21000",
                           "verify-receipt-shared-secret-21004", "network-tls-failure"])
        #expect(AppStoreFailureReason.allReasons.filter { $0.isConfigurationAlarm && $0.isRetryable }.isEmpty)
    }
}
