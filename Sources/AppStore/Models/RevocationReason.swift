/// Why Apple refunded or revoked a transaction (`revocationReason`).
public enum RevocationReason: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// `0`: another reason, e.g. an accidental purchase.
    case other = 0
    /// `1`: an actual or perceived issue within the app.
    case appIssue = 1
}
