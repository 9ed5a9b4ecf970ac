/// Whether the user bought the product or has it through Family Sharing (`inAppOwnershipType`).
public enum InAppOwnershipType: String, Sendable, Hashable, CaseIterable, Codable {
    /// `FAMILY_SHARED`.
    case familyShared = "FAMILY_SHARED"
    /// `PURCHASED`.
    case purchased = "PURCHASED"
}
