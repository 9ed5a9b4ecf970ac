import AppStore
import Foundation

extension PurchaseLifecycle {
    /// Non-consumables, consumables and non-renewing subscriptions: one transaction decides the
    /// purchase; later inputs can only revoke it (refund) or reinstate it (refund reversed). A
    /// restore (same purchase, new transaction id) changes nothing.
    func advanceOneTime(_ state: inout PurchaseState, _ input: Input) -> Advance {
        if let applied = state.signedDate, input.signed < applied { return .unchanged(.staleSuppressed) }
        let units = state.quantity
        if input.isRevoked, input.effect != .reinstate {
            guard state.status != .revoked else { return .unchanged(.duplicateSuppressed) }
            revoke(&state, input)
            state.signedDate = input.signed
            return .changed([state.productType == .consumable ? .clawback : .revocation])
        }
        // Reversed: Apple says so (`REFUND_REVERSED`, whichever transaction of the purchase it
        // carries), or signs the revoked transaction again without its revocation.
        if state.status == .revoked, input.effect == .reinstate
            || (input.transaction.transactionId == state.latestTransactionId && input.transaction.revocationDate == nil) {
            state.revocationDate = nil
            state.revocationReason = nil
            state.status = .active
            if let end = state.nonRenewingEnd, end <= input.signed {
                state.status = .expired
            }
            state.signedDate = input.signed
            state.quantity = units
            return .changed([.reinstatement])
        }
        if input.effect == .reinstate, input.signed > (state.signedDate ?? .distantPast) {
            state.signedDate = input.signed
            return .changed([.reversalRecorded])
        }
        return .unchanged(.duplicateSuppressed)
    }
}
