/// The type of in-app purchase (`type` claim of a transaction).
public enum ProductType: String, Sendable, Hashable, CaseIterable, Codable {
    /// `Auto-Renewable Subscription`.
    case autoRenewable = "Auto-Renewable Subscription"
    /// `Non-Consumable`.
    case nonConsumable = "Non-Consumable"
    /// `Consumable`.
    case consumable = "Consumable"
    /// `Non-Renewing Subscription`.
    case nonRenewable = "Non-Renewing Subscription"
}
