import Observability

/// Fulfil: turns one `receipt-verified/v1` into at most one `entitlement-changed/v1`.
///
/// Steps: the transaction's bundle id must match the submission's (`bundle-id-mismatch`); the
/// product must be in the ``ProductCatalogue`` (`unknown-product`); ``EntitlementRules`` decide
/// the change (or reject); the ``FulfilmentLedger`` claims the event under the record's
/// ``DeliveryScope`` (so the claim counts only once the output is acknowledged), and a duplicate
/// or stale claim ends the record with an outcome (`duplicate-suppressed`, `stale-suppressed`)
/// instead of an output.
public struct FulfilStage: Stage {
    public typealias Input = ReceiptVerified
    public typealias Output = EntitlementChanged
    public static var name: StageName { .fulfil }

    private let catalogue: ProductCatalogue
    private let ledger: any FulfilmentLedger

    /// Creates the stage.
    /// - Parameters:
    ///   - catalogue: the products the app sells.
    ///   - ledger: de-duplication state, shared by every record this worker processes.
    public init(catalogue: ProductCatalogue, ledger: any FulfilmentLedger) {
        self.catalogue = catalogue
        self.ledger = ledger
    }

    /// The ledger (the worker wires a ``KafkaFulfilmentLedger`` in as the runner's
    /// ``PartitionAssignmentHook`` too).
    public var fulfilmentLedger: any FulfilmentLedger { ledger }

    public func process(_ input: ReceiptVerified, context: StageContext) async throws -> StageResult<EntitlementChanged> {
        let transaction = input.transaction
        let subject = input.subject
        guard transaction.bundleId == input.bundleId else {
            return .reject(reason: .bundleIdMismatch,
                           detail: "transaction is for \(transaction.bundleId.prefix(155)), submission for \(input.bundleId)",
                           subject: subject)
        }
        guard let product = catalogue[transaction.productId] else {
            return .reject(reason: .unknownProduct,
                           detail: "product \"\(transaction.productId.prefix(255))\" is not in the catalogue", subject: subject)
        }
        let decision: EntitlementRules.Decision
        switch EntitlementRules.decide(transaction, product: product, now: context.now) {
        case .success(let value):
            decision = value
        case .failure(let rejection):
            return .reject(reason: rejection.reason, detail: rejection.detail, subject: subject)
        }
        let change = EntitlementChanged(
            action: decision.action, bundleId: input.bundleId, userId: input.userId, entitlement: product.entitlement,
            productId: product.productId, productType: product.type, transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId, quantity: decision.quantity,
            validUntil: decision.validUntil, effectiveAt: decision.effectiveAt, environment: transaction.environment,
            submissionId: input.submissionId, signedDate: transaction.signedDate)
        switch try await ledger.claim(LedgerEvent(change), scope: context.delivery) {
        case .firstTime:
            return .emit([change])
        case .duplicate:
            context.logger.debug("entitlement event already emitted", metadata: [
                LoggingKeys.transactionId: .string(transaction.transactionId),
                LoggingKeys.stageOutcome: .string(OutcomeCode.duplicateSuppressed.rawValue),
            ])
            return .done(outcome: .duplicateSuppressed, subject: subject)
        case .stale:
            context.logger.info("older update of a purchase whose newer state was applied", metadata: [
                LoggingKeys.transactionId: .string(transaction.transactionId),
                LoggingKeys.stageOutcome: .string(OutcomeCode.staleSuppressed.rawValue),
            ])
            return .done(outcome: .staleSuppressed, subject: subject)
        }
    }
}
