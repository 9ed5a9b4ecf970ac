import AppStore
import Foundation

extension PurchaseLifecycle {
    /// The first state of a purchase receiptd had not seen, and the kind of its first change.
    func start(_ input: Input, owner: OwnerKey) -> (PurchaseState, EntitlementChangeKind) {
        let transaction = input.transaction
        var state = PurchaseState(
            originalTransactionId: transaction.originalTransactionId, bundleId: owner.bundleId, userId: owner.userId,
            entitlement: input.product.entitlement, productId: input.product.productId, productType: input.product.type,
            latestTransactionId: transaction.transactionId, periodStart: transaction.purchaseDate ?? input.signed,
            expiresDate: transaction.expiresDate, durationMonths: input.product.durationMonths,
            ownershipType: transaction.ownershipType ?? "PURCHASED", environment: transaction.environment,
            signedDate: input.signed, ownerSince: input.signed)
        if input.product.type == .consumable {
            state.quantity = transaction.quantity * (input.product.unitsPerPurchase ?? 1)
        }
        applyRenewal(&state, input, force: true)
        if input.isRevoked {
            revoke(&state, input)
            return (state, .revocation)
        }
        if input.product.type == .autoRenewable {
            // Not `(state, enterPeriodStatus(&state, …))`: the tuple would copy the state before the call sets its status.
            let kind = enterPeriodStatus(&state, input, fresh: .purchase)
            return (state, kind)
        }
        if let end = state.nonRenewingEnd, end <= input.signed {
            state.status = .expired
            return (state, .expiration)
        }
        return (state, .purchase)
    }

    /// Sets the status of a period the state has just moved to, from the input's effect and dates.
    /// - Parameter fresh: the kind when the period is simply paid (purchase, renewal, …).
    func enterPeriodStatus(_ state: inout PurchaseState, _ input: Input, fresh: EntitlementChangeKind) -> EntitlementChangeKind {
        state.gracePeriodExpiresDate = nil
        state.expirationReason = nil
        state.revocationDate = nil
        state.revocationReason = nil
        switch input.effect {
        case .expire(let reason):
            state.status = .expired
            state.expirationReason = reason
            return .expiration
        case .gracePeriod(let until):
            state.status = .gracePeriod
            state.gracePeriodExpiresDate = until
            return .gracePeriod
        case .billingRetry:
            state.status = .billingRetry
            return .billingRetry
        default:
            if input.transaction.isUpgraded == true {
                state.status = .expired
                state.expirationReason = "upgraded"
                state.validUntil = input.signed
                return .productReplaced
            }
            if let expires = state.expiresDate, expires <= input.signed {
                state.status = .expired
                return .expiration
            }
            state.status = .active
            return fresh
        }
    }

    /// Marks the purchase revoked by the input (refund, Family Sharing revoked).
    func revoke(_ state: inout PurchaseState, _ input: Input) {
        state.status = .revoked
        state.revocationDate = input.transaction.revocationDate ?? input.signed
        state.revocationReason = input.transaction.revocationReason
    }

    /// Takes auto-renew status and the pending product from the input's renewal info (and a
    /// renewal-status or -preference effect) when it is not older than what was applied.
    /// - Returns: which of the two changed.
    @discardableResult
    func applyRenewal(_ state: inout PurchaseState, _ input: Input, force: Bool = false) -> (autoRenew: Bool, pending: Bool) {
        guard state.productType == .autoRenewable else { return (false, false) }
        if !force, let applied = state.renewalSignedDate, input.signed < applied { return (false, false) }
        let renewal = input.transaction.notification?.renewal
        var autoRenew = renewal?.autoRenew ?? state.autoRenew
        var pending = renewal?.autoRenewProductId ?? state.pendingProductId
        switch input.effect {
        case .renewalStatus(let on): autoRenew = on
        case .renewalPreference(let productId): pending = productId
        default: break
        }
        if pending == state.productId { pending = nil }
        let changed = (autoRenew != state.autoRenew, pending != state.pendingProductId)
        guard changed.0 || changed.1 || renewal != nil else { return changed }
        state.autoRenew = autoRenew
        state.pendingProductId = pending
        state.renewalSignedDate = max(state.renewalSignedDate ?? input.signed, input.signed)
        return changed
    }
}
