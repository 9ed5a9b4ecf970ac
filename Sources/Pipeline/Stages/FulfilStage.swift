import AppStore
import Foundation
import Observability

/// Fulfil: applies one `receipt-verified/v1` to its purchase's state and publishes what changed:
/// `entitlement-changed/v2` events (the resulting state, for a backend to apply blindly) and
/// `owner-purchase/v1` updates for the per-owner view.
///
/// Steps, each refusal with its own code:
/// - the transaction's bundle id must equal the submission's (`bundle-id-mismatch`);
/// - the product must be in the ``ProductCatalogue`` (`unknown-product`);
/// - the ledger (``KeyedStateStore`` of ``PurchaseState`` by `originalTransactionId`) hands the
///   purchase's state to ``PurchaseLifecycle``, which decides under the record's ``DeliveryScope``
///   (the new state counts only once the outputs are acknowledged): changes are emitted; nothing
///   new ends as an outcome (`duplicate-suppressed`, `stale-suppressed`,
///   `notification-informational`); policy refusals are rejected (`product-type-mismatch`,
///   `invalid-transaction`, `purchase-owned-by-another-user`, `app-account-token-mismatch`,
///   `sandbox-not-accepted`);
/// - a notification without a user for a purchase with no recorded owner fails transiently
///   (`owner-unknown`): it waits in the retry tiers for the app's own submission, then is
///   dead-lettered under that reason, from where replay re-drives it.
public struct FulfilStage: Stage {
    public typealias Input = ReceiptVerified
    public typealias Output = FulfilOutput
    public static var name: StageName { .fulfil }
    /// The ledger is all it waits on; its records run in the runner's batches.
    public static var waitsOn: StageWaiting { .deliveries }

    private let catalogue: ProductCatalogue
    private let lifecycle: PurchaseLifecycle
    private let ledger: KeyedStateStore<PurchaseState>

    /// Creates the stage.
    /// - Parameters:
    ///   - catalogue: the products the app sells.
    ///   - policy: transfer, token binding, sandbox and billing-retry choices.
    ///   - ledger: purchase states by `originalTransactionId`, shared by every record this worker
    ///     processes (``KeyedStateStore/purchaseLedger(reader:topic:logger:)`` in production).
    public init(catalogue: ProductCatalogue, policy: FulfilmentPolicy = FulfilmentPolicy(),
                ledger: KeyedStateStore<PurchaseState>, publishConsumptionRequests: Bool = false) {
        self.catalogue = catalogue
        self.lifecycle = PurchaseLifecycle(policy: policy)
        self.ledger = ledger
        self.publishConsumptionRequests = publishConsumptionRequests
    }

    /// Whether a verified `CONSUMPTION_REQUEST` becomes a ``ConsumptionRequest`` for the backend
    /// (`fulfil.consumptionRequests`) instead of ending `notification-informational`.
    let publishConsumptionRequests: Bool

    /// The ledger (the worker wires a Kafka-backed one in as the runner's ``PartitionAssignmentHook``).
    public var purchaseLedger: KeyedStateStore<PurchaseState> { ledger }

    public func process(_ input: ReceiptVerified, context: StageContext) async throws -> StageResult<FulfilOutput> {
        let transaction = input.transaction
        guard transaction.bundleId == input.bundleId else {
            return .reject(reason: .bundleIdMismatch,
                           detail: "transaction is for \(transaction.bundleId.prefix(155)), submission for \(input.bundleId)",
                           subject: input.subject)
        }
        if LifecycleEffect(transaction) == .informational {
            if publishConsumptionRequests, let notification = transaction.notification,
               notification.notificationType == "CONSUMPTION_REQUEST" {
                return try await consumptionRequest(input, notification: notification, context: context)
            }
            return informational(input, context: context)
        }
        guard let product = catalogue[transaction.productId] else {
            return .reject(reason: .unknownProduct,
                           detail: "product \"\(transaction.productId.prefix(255))\" is not in the catalogue", subject: input.subject)
        }
        let claimant = input.userId.isEmpty ? nil : input.owner
        let decision = try await ledger.update(transaction.originalTransactionId, scope: context.delivery) { state in
            let decision = lifecycle.apply(transaction, product: product, claimant: claimant, to: state, now: context.now)
            if case .changed(let next, _) = decision { return (next, decision) }
            return (nil, decision)
        }
        switch decision {
        case .changed(let state, let changes):
            return .emit(outputs(changes, state: state, input: input))
        case .unchanged(let outcome):
            context.logger.debug("purchase unchanged", metadata: [
                LoggingKeys.transactionIdHash: SubmissionSubject.loggedTransactionId(transaction.transactionId),
                LoggingKeys.stageOutcome: .string(outcome.rawValue),
            ])
            return .done(outcome: outcome, subject: input.subject)
        case .rejected(let rejection):
            return .reject(reason: rejection.reason, detail: rejection.detail, subject: input.subject)
        case .ownerUnknown:
            throw StageError(.transient, reason: .ownerUnknown,
                             detail: "no owner recorded for the purchase yet, and no usable appAccountToken")
        }
    }

    private func informational(_ input: ReceiptVerified, context: StageContext) -> StageResult<FulfilOutput> {
        context.logger.info("notification changes no entitlement", metadata: [
            "notification.type": .string(String((input.transaction.notification?.notificationType ?? "").prefix(64))),
            "notification.subtype": .string(String((input.transaction.notification?.subtype ?? "").prefix(64))),
            LoggingKeys.stageOutcome: .string(OutcomeCode.notificationInformational.rawValue),
        ])
        return .done(outcome: .notificationInformational, subject: input.subject)
    }

    /// Apple's refund consumption request for the purchase's owner (recorded in the ledger, else the
    /// submitter, else the `appAccountToken` user when bound); unknown owners wait in the retry tiers.
    private func consumptionRequest(_ input: ReceiptVerified, notification: NotificationSource,
                                    context: StageContext) async throws -> StageResult<FulfilOutput> {
        let transaction = input.transaction
        let recorded = try await ledger.update(transaction.originalTransactionId, scope: context.delivery) { state in
            (nil as PurchaseState?, state?.owner)
        }
        let token = lifecycle.policy.appAccountToken == .userIdIsToken ? transaction.appAccountToken?.lowercased() : nil
        guard let owner = recorded ?? (input.userId.isEmpty ? nil : input.owner)
            ?? token.map({ OwnerKey(bundleId: transaction.bundleId, userId: $0) }) else {
            throw StageError(.transient, reason: .ownerUnknown, detail: "no owner recorded for the consumption request's purchase yet")
        }
        let request = ConsumptionRequest(
            requestId: notification.notificationUUID, bundleId: owner.bundleId, userId: owner.userId,
            transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
            productId: transaction.productId, environment: transaction.environment,
            requestedAt: notification.signedDate ?? transaction.appleSignedDate ?? context.now)
        context.logger.info("consumption request published", metadata: [
            LoggingKeys.transactionIdHash: SubmissionSubject.loggedTransactionId(transaction.transactionId),
            "consumption.deadline": .string(ContractCoding.timestamp(request.deadline)),
        ])
        return .emit([.consumptionRequest(request)])
    }

    /// The events and owner-view updates of an applied input.
    private func outputs(_ changes: [LifecycleChange], state: PurchaseState, input: ReceiptVerified) -> [FulfilOutput] {
        var outputs: [FulfilOutput] = []
        outputs.reserveCapacity(2 * changes.count)
        for index in changes.indices {
            Self.append(changes[index], index: index, state: state, input: input, to: &outputs)
        }
        return outputs
    }

    /// One change's event and owner-view update, the event built straight into its output: a copy
    /// of it would retain every string it holds. `changedAt` is the event's `signedDate`.
    private static func append(_ change: borrowing LifecycleChange, index: Int, state: PurchaseState,
                               input: borrowing ReceiptVerified, to outputs: inout [FulfilOutput]) {
        outputs.append(.event(EntitlementChanged(
            change: change, index: index, purchase: state, transaction: input.transaction,
            submissionId: input.submissionId,
            effectiveAt: effectiveAt(change, state: state, transaction: input.transaction))))
        let view = OwnerPurchase(
            originalTransactionId: state.originalTransactionId, productId: change.productId, productType: state.productType,
            status: change.status, hasAccess: change.hasAccess, validUntil: change.validUntil,
            periodStart: state.periodStart, durationMonths: state.durationMonths, quantity: state.quantity,
            ownershipType: state.ownershipType, environment: state.environment,
            changedAt: input.transaction.appleSignedDate, version: state.version)
        outputs.append(.ownerUpdate(OwnerPurchaseUpdate(owner: change.owner, entitlement: change.entitlement, purchase: view)))
    }

    /// When a change took effect: the period start for new periods, the revocation date for
    /// refunds, the period end for expirations, else when Apple signed the input.
    static func effectiveAt(_ change: LifecycleChange, state: PurchaseState, transaction: VerifiedTransaction) -> Date {
        let signed = transaction.appleSignedDate ?? state.signedDate ?? Date(timeIntervalSince1970: 0)
        switch change.kind {
        case .purchase, .renewal, .resubscribe, .recovery, .productChange: return state.periodStart ?? signed
        case .revocation, .clawback: return state.revocationDate ?? signed
        case .expiration: return min(state.expiresDate ?? signed, signed)
        default: return signed
        }
    }
}

extension KeyedStateStore where Value == PurchaseState {
    /// Fulfil's production ledger: purchase states rebuilt from `entitlements.changed` (the
    /// `purchase` of each event; the highest version per purchase wins).
    public static func purchaseLedger(reader: any PartitionLogReader, topic: String, logger: Logger) -> KeyedStateStore<PurchaseState> {
        KeyedStateStore(reader: reader, topic: topic, logger: logger) { bytes, current in
            guard let purchase = try? ContractCoding.decode(PurchaseOfEvent.self, from: bytes).purchase else { return nil }
            if let known = current(purchase.originalTransactionId), known.version >= purchase.version { return nil }
            return (purchase.originalTransactionId, purchase)
        }
    }
}
