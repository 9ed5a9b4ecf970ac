/// What happened to a purchase, the `change` of `entitlement-changed/v2`. Each kind has one
/// ``action``; the table in `docs/entitlements.md` says which inputs lead to which kind.
public enum EntitlementChangeKind: String, Sendable, Codable, CaseIterable, Hashable {
    /// First purchase of the product (or first time receiptd sees it).
    case purchase
    /// A later auto-renewable period.
    case renewal
    /// A new period after the subscription had expired or been revoked.
    case resubscribe
    /// A renewal after billing trouble (grace period or billing retry).
    case recovery
    /// Apple extended the current period (`RENEWAL_EXTENDED`: same transaction, later `expiresDate`).
    case `extension`
    /// The subscription moved to another product of its group (upgrade now, downgrade or
    /// crossgrade at the renewal); the new product's side.
    case productChange
    /// The product's access ended because the subscription moved to another product of its group
    /// (an upgrade now, a downgrade or crossgrade at the renewal; `isUpgraded` on the old period).
    case productReplaced
    /// The period ended without renewal.
    case expiration
    /// Renewal failed; access continues until the grace period ends.
    case gracePeriod
    /// Renewal failed; Apple retries billing.
    case billingRetry
    /// Auto-renew was switched on or off.
    case autoRenewChange
    /// The product that renews next changed (pending downgrade/crossgrade set or cancelled).
    case pendingProductChange
    /// The current period (or the purchase) was refunded or revoked: access ends.
    case revocation
    /// A past period was refunded; the current period is paid, so access is unchanged.
    case pastPeriodRefund
    /// A consumable was refunded: take back `quantity` units.
    case clawback
    /// A refund was reversed (`REFUND_REVERSED`): access (or the units) restored.
    case reinstatement
    /// A refund reversal arrived before its refund: recorded (access unchanged) so that the older
    /// refund, when it arrives, is stale instead of revoking a purchase Apple has reinstated.
    case reversalRecorded
    /// The purchase moved to another user (transfer policy): the previous owner's side.
    case transferOut
    /// The purchase moved to another user (transfer policy): the new owner's side.
    case transferIn

    /// The coarse action of this kind of change (``EntitlementAction``), given whether the owner
    /// has access afterwards (a grace period keeps access; a billing retry may not).
    public func action(hasAccess: Bool) -> EntitlementAction {
        switch self {
        case .purchase, .resubscribe, .reinstatement, .transferIn: hasAccess ? .grant : .update
        case .renewal, .recovery, .`extension`, .productChange: hasAccess ? .renew : .update
        case .autoRenewChange, .pendingProductChange, .pastPeriodRefund, .gracePeriod, .reversalRecorded: .update
        case .billingRetry: hasAccess ? .update : .expire
        case .expiration, .productReplaced: .expire
        case .revocation, .clawback, .transferOut: .revoke
        }
    }
}
