import AppStore
import Foundation
@testable import Pipeline

extension ContractSamples {
    /// A consumption request, answers (one with and one without `refundPreference`), and the
    /// outcome of each kind as the real ``ConsumptionStage`` writes them.
    mutating func addConsumption() async throws {
        let requestedAt = Self.at("2026-12-30T06:00:00Z")
        let request = ConsumptionRequest(requestId: "6f1e2d3c-0000-4000-8000-000000000042", bundleId: Self.bundleId,
                                         userId: "player-7", transactionId: "2000000812345678",
                                         originalTransactionId: "2000000812345678", productId: "com.example.game.coins.100",
                                         environment: "Production", requestedAt: requestedAt)
        consumptionRequests = [request]
        let information = ConsumptionInformation(customerConsented: true, consumptionStatus: 2, platform: 1,
                                                 sampleContentProvided: false, deliveryStatus: 0, appAccountToken: "",
                                                 accountTenure: 3, playTime: 2, lifetimeDollarsRefunded: 0,
                                                 lifetimeDollarsPurchased: 2, userStatus: 1)
        var preferring = information
        preferring.refundPreference = 2
        preferring.appAccountToken = "b2f1c3a4-0000-4000-8000-00000000beef"
        let answer = ConsumptionAnswer(requestId: request.requestId, transactionId: request.transactionId,
                                       environment: request.environment, deadline: request.deadline, consumption: information)
        var second = answer
        second.consumption = preferring
        consumptionAnswers = [answer, second]

        let accepted = ConsumptionStage { _, _, _ in }
        let refused = ConsumptionStage { _, _, environment in
            throw AppStoreServerAPIError(reason: .apiInvalidRequest, httpStatus: 400, apiErrorCode: 4_000_000,
                                         environment: environment, detail: "refused")
        }
        var unconsented = answer
        unconsented.consumption.customerConsented = false
        let now = Self.at("2026-12-30T07:00:00Z")
        if case .reject(let reason, let detail, let subject) = try await accepted.process(unconsented, context: StageContext(now: now)) {
            rejected.append(ReceiptRejected(stage: .consumption, reason: reason, detail: detail, subject: subject, rejectedAt: now,
                                            originalValue: try ContractCoding.encode(unconsented)))
        }
        for (stage, at) in [(accepted, "2026-12-30T07:00:00Z"), (accepted, "2026-12-30T18:00:00.250Z"), (refused, "2026-12-30T07:00:00Z")] {
            if case .emit(let outcomes) = try await stage.process(answer, context: StageContext(now: Self.at(at))) {
                consumptionOutcomes += outcomes
            }
        }
    }
}
