/// Where a purchase stands, the `status` of `entitlement-changed/v2` and `entitlement-state/v1`.
public enum PurchaseStatus: String, Sendable, Codable, CaseIterable, Hashable {
    /// Paid and in its period (non-consumables: owned; consumables: granted).
    case active
    /// Renewal failed, Apple retries billing and promised access until the grace period ends.
    case gracePeriod
    /// Renewal failed without (or after) a grace period; Apple retries billing. No access unless
    /// `fulfil.billingRetryAccess` says otherwise.
    case billingRetry
    /// The period ended without renewal (or the product was upgraded away).
    case expired
    /// Refunded, revoked (Family Sharing ended) or transferred to another owner.
    case revoked
}
