import Foundation
import HTTP
import Observability
import Testing
@testable import AppStore

/// What ``AppStoreRequestMetrics`` counts for the Server API and verifyReceipt clients: every HTTP
/// exchange by endpoint, environment and status (0 for no response), its latency, and each failed
/// call once by reason code.
@Suite struct RequestMetricsTests {
    @Test func serverAPINotFoundInBothEnvironmentsCountsTwoRequestsAndOneFailure() async throws {
        let registry = MetricsRegistry()
        let transport = StubTransport(sequence: [ServerAPIFixture.apiError(404, 4040010)])
        let client = try AppStoreServerAPIClient(configuration: ServerAPIFixture.configuration(),
                                                 signer: try AppStoreJWTSigner.generate(), transport: transport,
                                                 clock: TestClock.fixed, metrics: AppStoreRequestMetrics(registry: registry))
        let error = await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "2000000000000001") }
        #expect(error?.reason == .apiTransactionNotFound)
        for environment in ["production", "sandbox"] {
            #expect(registry.value("receiptd_appstore_requests_total", labels: [
                ("endpoint", "transaction-info"), ("environment", environment), ("status", "404")]) == 1)
            #expect(registry.value("receiptd_appstore_request_duration_seconds", labels: [
                ("endpoint", "transaction-info"), ("environment", environment)]) == 1)  // observations
        }
        #expect(registry.value("receiptd_appstore_failures_total", labels: [
            ("endpoint", "transaction-info"), ("environment", "sandbox"), ("reason", "appstore-api-transaction-not-found")]) == 1)
    }

    @Test func unauthorizedAndTransportFailuresAreCountedByReason() async throws {
        let registry = MetricsRegistry()
        let metrics = AppStoreRequestMetrics(registry: registry)
        let unauthorized = StubTransport(sequence: [ServerAPIFixture.apiError(401, 0)])
        let client = try AppStoreServerAPIClient(configuration: ServerAPIFixture.configuration(),
                                                 signer: try AppStoreJWTSigner.generate(), transport: unauthorized,
                                                 clock: TestClock.fixed, metrics: metrics)
        _ = await ServerAPIFixture.apiFailure { _ = try await client.getTransactionHistory(transactionId: "2000000000000001") }
        #expect(registry.value("receiptd_appstore_requests_total", labels: [
            ("endpoint", "transaction-history"), ("environment", "production"), ("status", "401")]) == 1)
        #expect(registry.value("receiptd_appstore_failures_total", labels: [
            ("endpoint", "transaction-history"), ("environment", "production"), ("reason", "appstore-api-unauthorized")]) == 1)

        let refused = StubTransport { _ in throw HTTPError(code: .connectionFailed, message: "refused") }
        var configuration = VerifyReceiptConfiguration()
        configuration.productionURL = "https://buy.example.test/verifyReceipt"
        configuration.sandboxURL = "https://sandbox.example.test/verifyReceipt"
        let receipts = try VerifyReceiptClient(configuration: configuration, sharedSecret: nil, transport: refused,
                                               clock: TestClock.fixed, metrics: metrics)
        let failure = await ServerAPIFixture.receiptFailure { _ = try await receipts.verify(receiptData: "QUJD") }
        let reason = try #require(failure?.reason.code)
        #expect(registry.value("receiptd_appstore_requests_total", labels: [
            ("endpoint", "verify-receipt"), ("environment", "production"), ("status", "0")]) == 1)
        #expect(registry.value("receiptd_appstore_failures_total", labels: [
            ("endpoint", "verify-receipt"), ("environment", "production"), ("reason", reason)]) == 1)
    }
}
