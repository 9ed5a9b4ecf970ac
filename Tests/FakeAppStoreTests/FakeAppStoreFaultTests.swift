import AppStore
import FakeAppStore
import Foundation
import HTTP
import Testing

/// Each injected fault, through the real curl client, lands in the right retryable class; faults
/// are seeded and switchable at runtime. Rates are 0 or 1 where a test needs certainty.
@Suite struct FakeAppStoreFaultTests {
    static func faults(_ change: (inout FakeAppStoreFaults) -> Void) -> FakeAppStoreFaults {
        var faults = FakeAppStoreFaults()
        change(&faults)
        return faults
    }

    /// Asks both clients once and returns their failures.
    static func bothFail(_ harness: FakeHarness) async throws -> (AppStoreServerAPIError, VerifyReceiptError) {
        let purchase = harness.subscription(.production)
        let receipt = harness.fake.store.makeReceipt(customerId: purchase.customerId, environment: .production)
        let api = try #require(await failure(AppStoreServerAPIError.self) {
            _ = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
        })
        let legacy = try #require(await failure(VerifyReceiptError.self) {
            _ = try await harness.receipts.verify(receiptData: receipt)
        })
        return (api, legacy)
    }

    @Test func status21005IsRetryable() async throws {
        try await FakeHarness.with(faults: Self.faults { $0.status21005Rate = 1 }) { harness in
            let purchase = harness.subscription(.production)
            let receipt = harness.fake.store.makeReceipt(customerId: purchase.customerId, environment: .production)
            let error = try #require(await failure(VerifyReceiptError.self) { _ = try await harness.receipts.verify(receiptData: receipt) })
            #expect(error.reason.code == "verify-receipt-unavailable-21005")
            #expect(error.status == 21005 && error.isRetryable)
            // 21005 is a verifyReceipt status only: the Server API is unaffected.
            #expect(try await harness.api.getTransactionInfo(transactionId: purchase.transactionId).environment == .production)
            #expect(harness.fake.statistics.status21005 == 1)
        }
    }

    @Test func serverErrorsAreRetryable() async throws {
        try await FakeHarness.with(faults: Self.faults { $0.serverErrorRate = 1 }) { harness in
            let (api, legacy) = try await Self.bothFail(harness)
            #expect(api.reason.code == "appstore-api-unavailable" && api.isRetryable)
            #expect(api.httpStatus == 500 && api.apiErrorCode == 5_000_001)
            #expect(legacy.reason.code == "verify-receipt-http-unavailable" && legacy.isRetryable)
            #expect(legacy.httpStatus == 503)
            #expect(harness.fake.statistics.serverErrors == 2)
        }
    }

    @Test func rateLimitsCarryRetryAfterInMilliseconds() async throws {
        let faults = Self.faults {
            $0.rateLimitRate = 1
            $0.retryAfterDelay = .milliseconds(2500)
        }
        try await FakeHarness.with(faults: faults) { harness in
            let before = Date()
            let (api, legacy) = try await Self.bothFail(harness)
            let after = Date()
            #expect(api.reason.code == "appstore-api-rate-limited" && api.isRetryable)
            #expect(api.httpStatus == 429 && api.apiErrorCode == 4_290_000)
            let retryAfter = try #require(api.retryAfter)
            #expect(retryAfter >= before.addingTimeInterval(2.499) && retryAfter <= after.addingTimeInterval(2.501))
            #expect(legacy.reason.code == "verify-receipt-http-unavailable" && legacy.isRetryable)
            #expect(legacy.retryAfter != nil)
            #expect(harness.fake.statistics.rateLimited == 2)
        }
    }

    @Test func droppedConnectionsAreRetryableNetworkErrors() async throws {
        try await FakeHarness.with(faults: Self.faults { $0.dropRate = 1 }) { harness in
            let (api, legacy) = try await Self.bothFail(harness)
            #expect(api.reason.code == "network-error" && api.isRetryable && api.httpStatus == nil)
            #expect(legacy.reason.code == "network-error" && legacy.isRetryable)
            #expect(harness.fake.statistics.dropped == 2)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func heldRequestsTimeOut() async throws {
        let faults = Self.faults {
            $0.timeoutRate = 1
            $0.timeoutHold = .seconds(15)
        }
        try await FakeHarness.with(faults: faults, requestTimeout: .milliseconds(300)) { harness in
            let started = ContinuousClock.now
            let (api, legacy) = try await Self.bothFail(harness)
            // The fake holds for 15 s: finishing well before shows the client gave up, not the fake.
            #expect(ContinuousClock.now - started < .seconds(10), "the client gave up, not the fake")
            #expect(api.reason.code == "network-timeout" && api.isRetryable)
            #expect(legacy.reason.code == "network-timeout" && legacy.isRetryable)
            #expect(harness.fake.statistics.timedOut == 2)
        }
    }

    @Test func faultsChangeAtRuntime() async throws {
        try await FakeHarness.with(faults: Self.faults { $0.serverErrorRate = 1 }) { harness in
            let purchase = harness.subscription(.production)
            let error = await failure(AppStoreServerAPIError.self) {
                _ = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
            }
            #expect(error?.reason == .apiUnavailable)
            try harness.fake.setFaults(.none)
            #expect(try await harness.api.getTransactionInfo(transactionId: purchase.transactionId).environment == .production)
            #expect(throws: AppStoreConfigurationError.self) {
                try harness.fake.setFaults(Self.faults { $0.dropRate = 0.7; $0.rateLimitRate = 0.7 })
            }
        }
    }

    @Test func productionCanBeToldToAcceptSandboxReceipts() async throws {
        try await FakeHarness.with(faults: Self.faults { $0.sandboxReceiptOnProductionAnswers21007 = false }) { harness in
            let purchase = harness.subscription(.sandbox)
            let receipt = harness.fake.store.makeReceipt(customerId: purchase.customerId, environment: .sandbox)
            let result = try await harness.receipts.verify(receiptData: receipt)
            #expect(result.environment == .production, "answered by the production endpoint")
            #expect(result.rawEnvironment == "Sandbox")
            #expect(harness.fake.statistics.reroutes == 0)
        }
    }

    /// The same seed gives the same fault schedule; a different seed a different one.
    @Test func faultScheduleIsSeeded() async throws {
        func schedule(seed: UInt64) async throws -> [String] {
            try await FakeHarness.with(faults: Self.faults { $0.serverErrorRate = 0.5 }, seed: seed) { harness in
                let purchase = harness.subscription(.production)
                var outcomes: [String] = []
                for _ in 0..<16 {
                    do {
                        _ = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
                        outcomes.append("ok")
                    } catch let error as AppStoreServerAPIError {
                        outcomes.append(error.reason.code)
                    }
                }
                return outcomes
            }
        }
        let first = try await schedule(seed: 42)
        #expect(try await schedule(seed: 42) == first)
        #expect(try await schedule(seed: 43) != first)
        #expect(first.contains("ok") && first.contains("appstore-api-unavailable"))
    }

    @Test func latencyDelaysEveryAnswer() async throws {
        let faults = Self.faults {
            $0.latency = .milliseconds(150)
            $0.jitter = .milliseconds(50)
        }
        // A generous timeout: on a loaded machine the whole suite shares two cores.
        try await FakeHarness.with(faults: faults, requestTimeout: .seconds(60)) { harness in
            let purchase = harness.subscription(.production)
            let started = ContinuousClock.now
            _ = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
            let elapsed = ContinuousClock.now - started
            // Behaviour, not speed: the injected latency was applied (no upper bound on a shared machine).
            #expect(elapsed >= .milliseconds(150))
        }
    }
}
