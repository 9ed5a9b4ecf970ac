import Observability
import AppStore
import Foundation

/// Sends the backend's answer to a refund consumption request to Apple (Send Consumption
/// Information) and says how it ended, one ``ConsumptionOutcome`` per answer:
///
/// | situation | result |
/// |---|---|
/// | a member outside Apple's ranges, or no customer consent | rejected `invalid-field` (the backend's bug; nothing sent) |
/// | the answer came after its deadline | `expired` (`deadline-passed`), nothing sent |
/// | unknown `environment` | `failed` (`invalid-environment`), nothing sent |
/// | Apple accepted it (202) | `answered` |
/// | Apple refused it for good (400, 404, …) | `failed` with the App Store reason code and status |
/// | transient (429 with `Retry-After`, 5xx, timeout) | thrown: the retry tiers, then a dead letter; a retry past the deadline ends `expired` |
///
/// The App Store call is injected, so the rules are tested without Apple.
public struct ConsumptionStage: Stage {
    public typealias Input = ConsumptionAnswer
    public typealias Output = ConsumptionOutcome
    public static var name: StageName { .consumption }

    /// Sends one body for a transaction in an environment; throws the client's error.
    public typealias Send = @Sendable (_ transactionId: String, _ body: [UInt8], _ environment: AppStoreEnvironment) async throws -> Void
    let send: Send

    public init(send: @escaping Send) {
        self.send = send
    }

    /// Sends through the App Store Server API client (with its request budget, if any).
    public init(client: AppStoreServerAPIClient) {
        self.init { transactionId, body, environment in
            try await client.sendConsumptionInformation(transactionId: transactionId, body: body, environment: environment)
        }
    }

    public func process(_ input: ConsumptionAnswer, context: StageContext) async throws -> StageResult<ConsumptionOutcome> {
        func outcome(_ kind: ConsumptionOutcome.Kind, _ reason: String?, status: Int? = nil) -> StageResult<ConsumptionOutcome> {
            .emit([ConsumptionOutcome(requestId: input.requestId, transactionId: input.transactionId, outcome: kind,
                                      reason: reason, appleStatus: status, at: context.now)])
        }
        if let problem = input.consumption.problem {
            return .reject(reason: .invalidField, detail: problem,
                           subject: SubmissionSubject(submissionId: input.requestId, transactionId: input.transactionId))
        }
        guard context.now <= input.deadline else { return outcome(.expired, "deadline-passed") }
        guard let environment = AppStoreEnvironment(rawValue: input.environment) else { return outcome(.failed, "invalid-environment") }
        do {
            try await send(input.transactionId, try input.consumption.appleBody, environment)
        } catch let error as AppStoreServerAPIError where !error.isRetryable {
            context.logger.warning("consumption information refused", metadata: [
                LoggingKeys.transactionIdHash: SubmissionSubject.loggedTransactionId(input.transactionId), LoggingKeys.reason: .string(error.reason.code),
            ])
            return outcome(.failed, error.reason.code, status: error.httpStatus)
        } catch let error as AppStoreServerAPIError {
            throw AppStoreRequestStageError(error)
        }
        return outcome(.answered, nil, status: 202)
    }
}
