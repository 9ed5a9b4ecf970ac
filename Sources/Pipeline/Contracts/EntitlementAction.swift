/// What happened to an entitlement, the `action` of `entitlement-changed/v1`.
public enum EntitlementAction: String, Sendable, Codable, CaseIterable, Hashable {
    /// Access starts (first purchase or first subscription period).
    case grant
    /// A later period of an auto-renewable subscription extends access.
    case renew
    /// An auto-renewable subscription period ended without renewal.
    case expire
    /// Apple refunded or revoked the transaction; access must end.
    case revoke
}
