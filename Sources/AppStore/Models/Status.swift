/// The status of an auto-renewable subscription as of a notification's `signedDate`
/// (`data.status`).
public enum Status: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// `1`: active.
    case active = 1
    /// `2`: expired.
    case expired = 2
    /// `3`: in the billing retry period.
    case billingRetry = 3
    /// `4`: in the billing grace period.
    case billingGracePeriod = 4
    /// `5`: revoked.
    case revoked = 5
}
