/// The coarse effect of an entitlement change on access, the `action` of `entitlement-changed/v2`
/// (the fine-grained reason is its `change`, ``EntitlementChangeKind``).
public enum EntitlementAction: String, Sendable, Codable, CaseIterable, Hashable {
    /// Access starts (first purchase, resubscribe, reinstatement, transfer in).
    case grant
    /// Access continues further (renewal, extension, recovery from billing trouble).
    case renew
    /// State changed, access did not (auto-renew switched, pending product, a past period refunded,
    /// grace period entered).
    case update
    /// Access ended by time (period over, billing retry without access, upgraded away).
    case expire
    /// Access taken away (refund, Family Sharing revoked, transferred out, consumable clawback).
    case revoke
}
