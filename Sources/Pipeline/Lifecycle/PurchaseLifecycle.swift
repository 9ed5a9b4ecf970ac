import AppStore
import Foundation

/// One change the lifecycle decided, for one owner and entitlement (fulfil turns each into an
/// `entitlement-changed/v2` event and an owner-view update).
public struct LifecycleChange: Sendable, Equatable {
    public var kind: EntitlementChangeKind
    public var owner: OwnerKey
    public var entitlement: String
    public var productId: String
    public var status: PurchaseStatus
    public var hasAccess: Bool
    public var validUntil: Date?
    /// Units granted, taken back or restored (consumables).
    public var quantity: Int?

    /// The coarse action (``EntitlementChangeKind/action(hasAccess:)``).
    public var action: EntitlementAction { kind.action(hasAccess: hasAccess) }
}

/// What the lifecycle concluded for one input.
public enum LifecycleDecision: Sendable, Equatable {
    /// The purchase moved to `state`; publish `changes` (in order). Indirect: the state is
    /// hundreds of bytes, and a decision is passed back through the ledger's update.
    indirect case changed(PurchaseState, [LifecycleChange])
    /// Nothing to publish (`duplicate-suppressed`, `stale-suppressed`, `notification-informational`).
    case unchanged(OutcomeCode)
    /// The input is refused for good.
    case rejected(Rejection)
    /// A notification for a purchase with no recorded owner and no usable `appAccountToken`.
    case ownerUnknown
}

/// The entitlement lifecycle as a pure function: (what is known of a purchase, one verified
/// input) → (the purchase's next state, the changes to publish), or why nothing changes.
///
/// The rules, per product type, ordering and ownership, are in `docs/entitlements.md`; in short:
/// later auto-renewable periods always win, changes of one period are ordered by Apple's
/// `signedDate`, an older input never moves a purchase backwards, and an input that changes
/// nothing is a duplicate. No clock is read: `now` only stands in for a missing `signedDate`.
public struct PurchaseLifecycle: Sendable {
    public let policy: FulfilmentPolicy

    /// - Parameter policy: transfer, token binding, sandbox and billing-retry choices.
    public init(policy: FulfilmentPolicy) {
        self.policy = policy
    }

    /// Applies one verified transaction.
    /// - Parameters:
    ///   - transaction: the verified transaction (with its notification, if any).
    ///   - product: its catalogue entry (looked up by the caller).
    ///   - claimant: the submitting user; nil for a notification that named none.
    ///   - state: what is known of the purchase (nil: nothing yet).
    ///   - now: stands in for a missing `signedDate`.
    public func apply(_ transaction: VerifiedTransaction, product: CatalogueProduct, claimant: OwnerKey?,
                      to state: PurchaseState?, now: Date) -> LifecycleDecision {
        let effect = LifecycleEffect(transaction)
        if effect == .informational { return .unchanged(.notificationInformational) }
        let subject = SubmissionSubject(transactionId: transaction.transactionId)
        if let mismatch = Self.typeMismatch(transaction, product: product) {
            return .rejected(Rejection(reason: .productTypeMismatch, detail: mismatch, subject: subject))
        }
        if policy.sandbox == .reject, FulfilmentPolicy.isSandbox(transaction.environment) {
            return .rejected(Rejection(reason: .sandboxNotAccepted, detail: "environment \(transaction.environment.prefix(32)) "
                + "is refused by fulfil.sandboxPolicy reject", subject: subject))
        }
        let token = policy.appAccountToken == .userIdIsToken ? transaction.appAccountToken?.lowercased() : nil
        if let token, let claimant, claimant.userId.lowercased() != token {
            return .rejected(Rejection(reason: .appAccountTokenMismatch,
                                       detail: "appAccountToken does not name the submitting user", subject: subject))
        }
        if product.type == .consumable, transaction.quantity < 1
            || transaction.quantity.multipliedReportingOverflow(by: product.unitsPerPurchase ?? 1).overflow {
            return .rejected(Rejection(reason: .invalidTransaction,
                                       detail: "consumable quantity \(transaction.quantity) is not usable", subject: subject))
        }
        if product.type == .autoRenewable, transaction.expiresDate == nil {
            return .rejected(Rejection(reason: .invalidTransaction, detail: "auto-renewable transaction without expiresDate",
                                       subject: subject))
        }
        if product.type == .nonRenewing, transaction.purchaseDate == nil {
            return .rejected(Rejection(reason: .invalidTransaction, detail: "non-renewing transaction without purchaseDate",
                                       subject: subject))
        }

        let input = Input(transaction: transaction, product: product, effect: effect,
                          signed: transaction.appleSignedDate ?? now)
        guard var current = state else {
            guard let owner = claimant ?? token.map({ OwnerKey(bundleId: transaction.bundleId, userId: $0) }) else {
                return .ownerUnknown
            }
            var (created, kind) = start(input, owner: owner)
            return finish(&created, before: nil, kinds: [kind])
        }
        let previousOwner = current.owner
        let conflict = claimant.map { $0 != previousOwner } ?? false
        // Only a claim signed after the one that made the current owner moves the purchase: an
        // older one (a redelivered copy of the previous owner's submission) is old news.
        let moves = conflict && policy.transfer == .transfer && current.ownerSince.map { input.signed > $0 } ?? true
        var next = current
        let kinds: [EntitlementChangeKind]
        switch current.productType == .autoRenewable ? advanceSubscription(&next, input) : advanceOneTime(&next, input) {
        case .changed(let changeKinds): kinds = changeKinds
        case .unchanged(let outcome):
            guard conflict else { return .unchanged(outcome) }
            guard policy.transfer == .transfer, let claimant else {
                return .rejected(Rejection(reason: .purchaseOwnedByAnotherUser,
                                           detail: "purchase is recorded for another user (fulfil.transferPolicy keep)",
                                           subject: subject))
            }
            guard moves else { return .unchanged(outcome) }
            return transfer(&current, to: claimant, at: input.signed)
        }
        if moves, let claimant {
            next.owner = claimant
            next.ownerSince = input.signed
            var decision = finish(&next, before: current, kinds: kinds)
            if case .changed(let state, let changes) = decision {
                let out = transferOut(of: current, at: input.signed)
                let into = changes.map { change in
                    var change = change
                    if change.owner == claimant, change.entitlement == state.entitlement { change.kind = .transferIn }
                    return change
                }
                decision = .changed(state, [out] + into)
            }
            return decision
        }
        return finish(&next, before: current, kinds: kinds)
    }

    /// The purchase moves to `claimant` (whose claim Apple signed at `signed`) with nothing else changing.
    private func transfer(_ state: inout PurchaseState, to claimant: OwnerKey, at signed: Date) -> LifecycleDecision {
        let out = transferOut(of: state, at: signed)
        state.owner = claimant
        state.ownerSince = signed
        state.version += 1
        return .changed(state, [out, change(.transferIn, state)])
    }

    /// The previous owner's side of a transfer: access to the purchase's entitlement ends at `signed`.
    private func transferOut(of previous: PurchaseState, at signed: Date) -> LifecycleChange {
        LifecycleChange(kind: .transferOut, owner: previous.owner, entitlement: previous.entitlement,
                        productId: previous.productId, status: .revoked, hasAccess: false, validUntil: signed, quantity: nil)
    }

    /// Fills the derived fields (access, validUntil), bumps the version and lists the changes:
    /// `kinds` on the purchase's current entitlement, plus the end of the old entitlement when a
    /// product change moved the purchase to another one.
    func finish(_ state: inout PurchaseState, before: PurchaseState?, kinds: [EntitlementChangeKind]) -> LifecycleDecision {
        settleAccess(&state)
        state.version = (before?.version ?? 0) + 1
        var changes: [LifecycleChange] = []
        changes.reserveCapacity(kinds.count + 1)
        if let before, before.hasAccess, before.entitlement != state.entitlement {
            var ended = change(.productReplaced, before)
            (ended.status, ended.hasAccess, ended.validUntil) = (.expired, false, state.periodStart ?? state.signedDate)
            ended.owner = state.owner
            changes.append(ended)
        }
        for kind in kinds { changes.append(change(kind, state)) }
        return .changed(state, changes)
    }

    func change(_ kind: EntitlementChangeKind, _ state: PurchaseState) -> LifecycleChange {
        LifecycleChange(kind: kind, owner: state.owner, entitlement: state.entitlement, productId: state.productId,
                        status: state.status, hasAccess: state.hasAccess, validUntil: state.validUntil,
                        quantity: state.productType == .consumable ? state.quantity : nil)
    }

    /// Derives `hasAccess` and `validUntil` from the status and the policies.
    func settleAccess(_ state: inout PurchaseState) {
        switch state.status {
        case .active:
            state.hasAccess = true
            switch state.productType {
            case .autoRenewable: state.validUntil = state.expiresDate
            case .nonRenewing: state.validUntil = state.nonRenewingEnd
            case .nonConsumable, .consumable: state.validUntil = nil
            }
        case .gracePeriod:
            state.hasAccess = true
            state.validUntil = state.gracePeriodExpiresDate ?? state.expiresDate
        case .billingRetry:
            state.hasAccess = policy.billingRetryAccess
            state.validUntil = state.expiresDate
        case .expired:
            state.hasAccess = false
            if state.expirationReason != "upgraded" {
                state.validUntil = state.productType == .nonRenewing ? state.nonRenewingEnd : state.expiresDate
            }
        case .revoked:
            state.hasAccess = false
            state.validUntil = state.revocationDate
        }
        state.accessWithheld = nil
        if state.hasAccess, policy.sandbox == .tag, FulfilmentPolicy.isSandbox(state.environment) {
            state.hasAccess = false
            state.accessWithheld = "sandbox"
        }
    }

    /// Apple's `type` must agree with the catalogue; legacy receipts often carry none.
    private static func typeMismatch(_ transaction: VerifiedTransaction, product: CatalogueProduct) -> String? {
        guard !transaction.type.isEmpty else { return nil }
        guard let appleType = transaction.productType else {
            return "Apple type \"\(transaction.type.prefix(64))\" is unknown; catalogue says \(product.type.rawValue) for \(product.productId)"
        }
        guard appleType == product.type else {
            return "Apple type \(appleType.rawValue) contradicts catalogue type \(product.type.rawValue) for \(product.productId)"
        }
        return nil
    }

    /// One input with what every rule needs of it.
    struct Input {
        let transaction: VerifiedTransaction
        let product: CatalogueProduct
        let effect: LifecycleEffect
        /// Apple's `signedDate` of the input (the notification's, else the transaction's, else now).
        let signed: Date

        var isRevoked: Bool { transaction.revocationDate != nil || effect == .revoke }
    }

    /// What an advance concluded for an existing purchase.
    enum Advance {
        case changed([EntitlementChangeKind])
        case unchanged(OutcomeCode)
    }
}
