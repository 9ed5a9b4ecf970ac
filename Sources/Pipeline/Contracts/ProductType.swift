/// The four kinds of in-app product, as named in the product catalogue and in
/// `entitlement-changed/v1` (`productType`).
public enum ProductType: String, Sendable, Codable, CaseIterable, Hashable {
    /// A subscription Apple renews automatically; each period is a new transaction.
    case autoRenewable
    /// A subscription of fixed length that the app itself times (`durationMonths`).
    case nonRenewing
    /// Bought once, kept forever.
    case nonConsumable
    /// Used up, bought again (coins, lives); granted as a quantity.
    case consumable

    /// Maps Apple's transaction `type` string (e.g. `"Auto-Renewable Subscription"`); nil for
    /// values Apple may add later.
    public init?(appleType: String) {
        switch appleType {
        case "Auto-Renewable Subscription": self = .autoRenewable
        case "Non-Renewing Subscription": self = .nonRenewing
        case "Non-Consumable": self = .nonConsumable
        case "Consumable": self = .consumable
        default: return nil
        }
    }

    /// Apple's transaction `type` string for this kind.
    public var appleType: String {
        switch self {
        case .autoRenewable: "Auto-Renewable Subscription"
        case .nonRenewing: "Non-Renewing Subscription"
        case .nonConsumable: "Non-Consumable"
        case .consumable: "Consumable"
        }
    }
}
