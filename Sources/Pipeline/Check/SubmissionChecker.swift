import Foundation
import Observability

/// Ingest followed by verify on one record, in process: what `receiptd check` runs, so operators
/// and tests get exactly the verdicts of the stage workers without a broker.
public struct SubmissionChecker: Sendable {
    private let ingest: IngestStage
    private let verify: VerifyStage

    /// - Parameters:
    ///   - ingest: the ingest stage (its limits apply).
    ///   - verify: the verify stage with its verifier.
    public init(ingest: IngestStage, verify: VerifyStage) {
        self.ingest = ingest
        self.verify = verify
    }

    /// Runs both stages on one `receipt-submitted/v1` record value.
    public func check(_ value: [UInt8], now: Date) async -> CheckResult {
        let submission: IngestedSubmission
        switch ingest.ingest(value, now: now) {
        case .failure(let rejection):
            return CheckResult(submissionId: rejection.subject.submissionId, outcome: .rejected,
                               reason: rejection.reason.rawValue, detail: rejection.detail)
        case .success(let ingested):
            submission = ingested
        }
        let context = StageContext(now: now)
        do {
            switch try await verify.process(submission, context: context) {
            case .emit(let verified):
                return CheckResult(submissionId: submission.submissionId, outcome: .verified,
                                   transactions: verified.map(\.transaction))
            case .reject(let reason, let detail, _):
                return CheckResult(submissionId: submission.submissionId, outcome: .rejected,
                                   reason: reason.rawValue, detail: detail)
            case .done(let outcome, _):
                return CheckResult(submissionId: submission.submissionId, outcome: .verified,
                                   reason: outcome.rawValue, detail: "no transactions")
            }
        } catch let error as any ClassifiedError {
            return CheckResult(submissionId: submission.submissionId,
                               outcome: error.disposition == .transient ? .retry : .rejected,
                               reason: error.reason.rawValue, detail: "\(error)")
        } catch {
            return CheckResult(submissionId: submission.submissionId, outcome: .retry,
                               reason: ReasonCode.unclassified.rawValue, detail: "\(error)")
        }
    }
}

/// One line of `receiptd check` output.
public struct CheckResult: Sendable, Equatable {
    /// The verdict.
    public enum Outcome: String, Sendable {
        /// Genuine: the transactions are listed.
        case verified
        /// Refused for good, with a reason code.
        case rejected
        /// Failed in a way that may succeed later (the pipeline would retry it).
        case retry
    }

    public var submissionId: String?
    public var outcome: Outcome
    public var reason: String?
    public var detail: String?
    public var transactions: [VerifiedTransaction] = []

    public init(submissionId: String?, outcome: Outcome, reason: String? = nil, detail: String? = nil,
                transactions: [VerifiedTransaction] = []) {
        self.submissionId = submissionId
        self.outcome = outcome
        self.reason = reason
        self.detail = detail
        self.transactions = transactions
    }

    /// The JSON line: `submissionId`, `outcome`, `reason`, `detail`, `transactions` with RFC 3339 dates.
    public func jsonLine() -> String {
        func date(_ d: Date?) -> Any { d.map { RFC3339.string(from: $0) } ?? NSNull() }
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        let object: [String: Any] = [
            "submissionId": opt(submissionId),
            "outcome": outcome.rawValue,
            "reason": opt(reason),
            "detail": opt(detail),
            "transactions": transactions.map { t -> [String: Any] in
                [
                    "transactionId": t.transactionId, "originalTransactionId": t.originalTransactionId,
                    "bundleId": t.bundleId, "productId": t.productId, "type": t.type, "quantity": t.quantity,
                    "purchaseDate": date(t.purchaseDate), "expiresDate": date(t.expiresDate),
                    "revocationDate": date(t.revocationDate), "environment": t.environment,
                    "signedDate": date(t.signedDate), "appAccountToken": opt(t.appAccountToken),
                    "notification": t.notification.map { n -> Any in
                        ["notificationType": n.notificationType, "subtype": opt(n.subtype),
                         "notificationUUID": n.notificationUUID, "effect": n.effect]
                    } ?? NSNull(),
                ]
            },
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
