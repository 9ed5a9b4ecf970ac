/// Whether a subscription renews automatically (`autoRenewStatus` of renewal info).
public enum AutoRenewStatus: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// `0`: automatic renewal is off.
    case off = 0
    /// `1`: automatic renewal is on.
    case on = 1
}
