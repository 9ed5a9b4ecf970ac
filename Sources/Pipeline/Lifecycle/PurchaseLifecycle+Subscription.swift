import AppStore
import Foundation

extension PurchaseLifecycle {
    /// Auto-renewable subscriptions: periods ordered by (start, end); within the current period,
    /// changes ordered by `signedDate`.
    func advanceSubscription(_ state: inout PurchaseState, _ input: Input) -> Advance {
        let transaction = input.transaction
        let start = transaction.purchaseDate ?? input.signed
        let end = transaction.expiresDate ?? input.signed
        let currentStart = state.periodStart ?? .distantPast
        let currentEnd = state.expiresDate ?? .distantPast
        let newer = transaction.isUpgraded != true
            && (start > currentStart || (start == currentStart && end > currentEnd))

        if newer {
            return .changed([enterNewPeriod(&state, input, start: start, end: end)])
        }
        let samePeriod = transaction.transactionId == state.latestTransactionId
            || (start == currentStart && end == currentEnd)
        guard samePeriod else {
            // An older period: only its refund is news (access follows the current period).
            guard input.isRevoked, !state.refundedTransactionIds.contains(transaction.transactionId) else {
                return .unchanged(.staleSuppressed)
            }
            state.refundedTransactionIds = Array((state.refundedTransactionIds + [transaction.transactionId]).suffix(32))
            return .changed([.pastPeriodRefund])
        }
        if let applied = state.signedDate, input.signed < applied {
            // Renewal info may still be news (it has its own order), status changes are not.
            let renewal = applyRenewal(&state, input)
            return Self.renewalKind(renewal, effect: input.effect).map { .changed([$0]) } ?? .unchanged(.staleSuppressed)
        }
        let before = state
        let kind = samePeriodChange(&state, input)
        state.signedDate = max(state.signedDate ?? input.signed, input.signed)
        let renewal = applyRenewal(&state, input)
        if let kind { return .changed([kind]) }
        if let kind = Self.renewalKind(renewal, effect: input.effect) { return .changed([kind]) }
        state = before
        return .unchanged(.duplicateSuppressed)
    }

    /// The change a renewal-info update alone makes: the one the notification is about first.
    static func renewalKind(_ changed: (autoRenew: Bool, pending: Bool), effect: LifecycleEffect) -> EntitlementChangeKind? {
        if case .renewalPreference = effect, changed.pending { return .pendingProductChange }
        if changed.autoRenew { return .autoRenewChange }
        return changed.pending ? .pendingProductChange : nil
    }

    /// A later period (renewal, resubscribe, recovery, extension, product change).
    private func enterNewPeriod(_ state: inout PurchaseState, _ input: Input, start: Date, end: Date) -> EntitlementChangeKind {
        let transaction = input.transaction
        let previous = state
        var fresh: EntitlementChangeKind
        switch previous.status {
        case .expired, .revoked: fresh = .resubscribe
        case .gracePeriod, .billingRetry: fresh = .recovery
        case .active: fresh = transaction.transactionId == previous.latestTransactionId ? .`extension` : .renewal
        }
        if transaction.productId != previous.productId {
            state.productId = input.product.productId
            state.entitlement = input.product.entitlement
            if previous.hasAccess || previous.expirationReason == "upgraded" { fresh = .productChange }
        }
        state.latestTransactionId = transaction.transactionId
        state.periodStart = start
        state.expiresDate = end
        state.signedDate = input.signed
        state.environment = transaction.environment
        if let ownership = transaction.ownershipType { state.ownershipType = ownership }
        var kind = enterPeriodStatus(&state, input, fresh: fresh)
        if input.isRevoked, input.effect != .reinstate {
            // The first news of this period is its refund (a period receiptd never saw paid).
            revoke(&state, input)
            kind = .revocation
        }
        applyRenewal(&state, input)
        return kind
    }

    /// A change of the current period's status; nil when the input says nothing new about it.
    private func samePeriodChange(_ state: inout PurchaseState, _ input: Input) -> EntitlementChangeKind? {
        let transaction = input.transaction
        if transaction.isUpgraded == true {
            guard !(state.status == .expired && state.expirationReason == "upgraded") else { return nil }
            state.status = .expired
            state.expirationReason = "upgraded"
            state.validUntil = input.signed
            return .productReplaced
        }
        if input.isRevoked, input.effect != .reinstate {
            guard state.status != .revoked else { return nil }
            revoke(&state, input)
            return .revocation
        }
        if state.status == .revoked {
            // Apple signed the period again without its revocation: the refund was reversed.
            guard input.effect == .reinstate || transaction.revocationDate == nil else { return nil }
            _ = enterPeriodStatus(&state, input, fresh: .reinstatement)
            return .reinstatement
        }
        switch input.effect {
        case .expire(let reason):
            guard state.status != .expired else { return nil }
            state.status = .expired
            state.expirationReason = reason
            return .expiration
        case .gracePeriod(let until):
            guard state.status != .gracePeriod || state.gracePeriodExpiresDate != until else { return nil }
            state.status = .gracePeriod
            state.gracePeriodExpiresDate = until ?? state.gracePeriodExpiresDate
            return .gracePeriod
        case .billingRetry:
            guard state.status != .billingRetry else { return nil }
            state.status = .billingRetry
            return .billingRetry
        case .reinstate:
            guard input.signed > (state.signedDate ?? .distantPast) else { return nil }
            return .reversalRecorded
        case .transactionUpdate:
            // The transaction alone: its period ended when Apple signed it. Billing trouble
            // already recorded is more specific than that, so it stays.
            guard state.status == .active, let end = state.expiresDate, end <= input.signed else { return nil }
            state.status = .expired
            return .expiration
        case .renewalPreference, .renewalStatus, .revoke, .informational:
            return nil
        }
    }
}
