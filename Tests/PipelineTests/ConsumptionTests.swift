import AppStore
import Foundation
import Synchronization
import Testing
@testable import Pipeline

/// Refund consumption requests: fulfil turns a verified `CONSUMPTION_REQUEST` into a request for
/// the purchase's owner (when enabled), and the consumption stage's answer rules.
@Suite struct ConsumptionTests {
    let ledger = KeyedStateStore<PurchaseState>()

    func fulfil(publish: Bool) -> FulfilStage {
        FulfilStage(catalogue: Fixtures.catalogue, ledger: ledger, publishConsumptionRequests: publish)
    }

    static func request(_ id: String = "1001") -> VerifiedTransaction {
        var transaction = Fixtures.transaction(id: id)
        transaction.notification = NotificationSource(notificationType: "CONSUMPTION_REQUEST", subtype: nil, notificationUUID: "n-9",
                                                      effect: "informational", signedDate: Fixtures.date("2026-12-01T06:00:00Z"))
        return transaction
    }

    @Test func aConsumptionRequestGoesToThePurchasesRecordedOwner() async throws {
        _ = try await fulfil(publish: true).process(Fixtures.verified(Fixtures.transaction()), context: StageContext(now: Fixtures.now))
        let result = try await fulfil(publish: true).process(Fixtures.verified(Self.request(), submissionId: "apple", userId: ""),
                                                             context: StageContext(now: Fixtures.now))
        let outputs = try result.outputs()
        guard outputs.count == 1, case .consumptionRequest(let request) = outputs[0] else {
            Issue.record("expected one consumption request, got \(outputs)")
            return
        }
        #expect(request.userId == "user-1" && request.bundleId == "com.example.game")
        #expect(request.requestId == "n-9" && request.transactionId == "1001" && request.originalTransactionId == "1001")
        #expect(request.requestedAt == Fixtures.date("2026-12-01T06:00:00Z"))
        #expect(request.deadline == Fixtures.date("2026-12-01T18:00:00Z"))
        #expect(outputs[0].topic == .consumptionRequests && outputs[0].recordKey == "1001")
        #expect(ledger.value(of: "1001", in: 0)?.version == 1, "the request changes no purchase")
    }

    @Test func withoutAKnownOwnerItWaitsAndWhenDisabledItIsInformational() async throws {
        await #expect(throws: StageError.self) {
            try await fulfil(publish: true).process(Fixtures.verified(Self.request(), userId: ""), context: StageContext(now: Fixtures.now))
        }
        let (outcome, _) = try await fulfil(publish: false).process(Fixtures.verified(Self.request(), userId: ""),
                                                                     context: StageContext(now: Fixtures.now)).outcome()
        #expect(outcome == .notificationInformational)
    }

    static let deadline = Fixtures.date("2026-12-01T18:00:00Z")
    static func answer(_ consented: Bool = true, preference: Int? = nil) -> ConsumptionAnswer {
        ConsumptionAnswer(requestId: "n-9", transactionId: "1001", environment: "Production", deadline: deadline,
                          consumption: ConsumptionInformation(customerConsented: consented, consumptionStatus: 3, platform: 1,
                                                              sampleContentProvided: false, deliveryStatus: 0, appAccountToken: "",
                                                              accountTenure: 1, playTime: 4, lifetimeDollarsRefunded: 0,
                                                              lifetimeDollarsPurchased: 1, userStatus: 1, refundPreference: preference))
    }

    final class Calls: Sendable {
        let bodies = Mutex<[(String, [UInt8], AppStoreEnvironment)]>([])
        var count: Int { bodies.withLock { $0.count } }
    }

    func outcome(_ result: StageResult<ConsumptionOutcome>) throws -> ConsumptionOutcome {
        let outputs = try result.outputs()
        return try #require(outputs.count == 1 ? outputs[0] : nil)
    }

    @Test func anAnswerBeforeTheDeadlineIsSentOnceAndAnswered() async throws {
        let calls = Calls()
        let stage = ConsumptionStage { id, body, environment in calls.bodies.withLock { $0.append((id, body, environment)) } }
        let result = try outcome(await stage.process(Self.answer(), context: StageContext(now: Self.deadline.addingTimeInterval(-60))))
        #expect(result.outcome == .answered && result.appleStatus == 202 && result.reason == nil && result.requestId == "n-9")
        let sent = try #require(calls.bodies.withLock { $0.first })
        #expect(sent.0 == "1001" && sent.2 == .production)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(sent.1)) as? [String: Any])
        #expect(body["customerConsented"] as? Bool == true && body["consumptionStatus"] as? Int == 3)
        #expect(body["refundPreference"] == nil, "absent, not null, for Apple")
        #expect(calls.count == 1)
    }

    @Test func lateInvalidAndRefusedAnswersEndWithTheirReason() async throws {
        let calls = Calls()
        let stage = ConsumptionStage { id, body, environment in calls.bodies.withLock { $0.append((id, body, environment)) } }
        let late = try outcome(await stage.process(Self.answer(), context: StageContext(now: Self.deadline.addingTimeInterval(1))))
        #expect(late.outcome == .expired && late.reason == "deadline-passed")
        var unknown = Self.answer()
        unknown.environment = "Staging"
        #expect(try outcome(await stage.process(unknown, context: StageContext(now: Fixtures.now))).reason == "invalid-environment")
        guard case .reject(let reason, _, _) = try await stage.process(Self.answer(false), context: StageContext(now: Fixtures.now)) else {
            Issue.record("an answer without consent was not rejected")
            return
        }
        #expect(reason == .invalidField)
        #expect(calls.count == 0, "nothing was sent to Apple")

        let refused = ConsumptionStage { _, _, environment in
            throw AppStoreServerAPIError(reason: .apiInvalidRequest, httpStatus: 400, environment: environment, detail: "no")
        }
        let failed = try outcome(await refused.process(Self.answer(), context: StageContext(now: Fixtures.now)))
        #expect(failed.outcome == .failed && failed.appleStatus == 400 && failed.reason == AppStoreFailureReason.apiInvalidRequest.code)
    }

    @Test func aThrottledAnswerGoesToTheRetryTiersWithAppleRetryAfter() async throws {
        let retryAt = Fixtures.now.addingTimeInterval(30)
        let throttled = ConsumptionStage { _, _, environment in
            throw AppStoreServerAPIError(reason: .apiRateLimited, httpStatus: 429, environment: environment, retryAfter: retryAt,
                                         detail: "slow down")
        }
        do {
            _ = try await throttled.process(Self.answer(), context: StageContext(now: Fixtures.now))
            Issue.record("a 429 did not throw")
        } catch let error as AppStoreRequestStageError {
            #expect(error.disposition == .transient && error.retryAfter == retryAt)
        }
    }
}
