import Foundation
import Testing
@testable import Pipeline

/// Unanswered consumption requests end `expired` once their deadline and the grace have passed,
/// once each, and never when an outcome exists.
@Suite struct ConsumptionExpiryTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)

    static func request(_ id: String, requestedAt: Date) -> ConsumptionRequest {
        ConsumptionRequest(requestId: id, bundleId: "com.example.game", userId: "user-1", transactionId: "tx-\(id)",
                           originalTransactionId: "otx-\(id)", productId: "com.example.coins", environment: "Production",
                           requestedAt: requestedAt)
    }

    static func outcome(_ id: String, _ kind: ConsumptionOutcome.Kind) -> ConsumptionOutcome {
        ConsumptionOutcome(requestId: id, transactionId: "tx-\(id)", outcome: kind, reason: nil, appleStatus: nil, at: t0)
    }

    @Test func onlyUnansweredRequestsPastDeadlineAndGraceExpire() {
        let window = ConsumptionRequest.answerWindow
        let requests = [
            Self.request("answered", requestedAt: Self.t0),
            Self.request("failed", requestedAt: Self.t0),
            Self.request("silent", requestedAt: Self.t0),
            Self.request("silent", requestedAt: Self.t0),  // redelivered notification: same requestId
            Self.request("within-grace", requestedAt: Self.t0.addingTimeInterval(3000)),
            Self.request("pending", requestedAt: Self.t0.addingTimeInterval(window)),
        ]
        let outcomes = [Self.outcome("answered", .answered), Self.outcome("failed", .failed)]
        let now = Self.t0.addingTimeInterval(window + 3600 + 1)  // an hour and a second past t0's deadline
        let expired = ConsumptionExpiry.expired(requests: requests, outcomes: outcomes, now: now, grace: 3600)
        #expect(expired.map(\.requestId) == ["silent"])
        #expect(expired.first?.outcome == .expired && expired.first?.reason == ConsumptionExpiry.notAnswered)
        #expect(expired.first?.transactionId == "tx-silent" && expired.first?.at == now)
        // Once published, a second sweep finds nothing left.
        #expect(ConsumptionExpiry.expired(requests: requests, outcomes: outcomes + expired, now: now, grace: 3600).isEmpty)
        // Later, the request inside the grace expires too; the pending one's deadline has not passed.
        let later = now.addingTimeInterval(3000)
        #expect(ConsumptionExpiry.expired(requests: requests, outcomes: outcomes + expired, now: later, grace: 3600)
            .map(\.requestId) == ["within-grace"])
    }
}
