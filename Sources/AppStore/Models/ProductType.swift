/// The four kinds of in-app product: the one vocabulary for the whole domain (Apple's JWS `type`,
/// the legacy receipt's attribute 1707, the product catalogue and every receiptd contract).
///
/// The raw values are receiptd's names (`autoRenewable`, …); Apple's spellings convert through
/// ``init(appleType:)`` and ``init(receiptCode:)``, which answer nil for values Apple adds later,
/// so models keep the raw value and offer this typed view on top.
public enum ProductType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A subscription Apple renews automatically; each period is a new transaction.
    case autoRenewable
    /// A subscription of fixed length that the app itself times.
    case nonRenewing
    /// Bought once, kept forever (restored with a new transaction id).
    case nonConsumable
    /// Used up and bought again (coins, lives); granted as a quantity.
    case consumable

    /// Maps Apple's JWS `type` (e.g. `"Auto-Renewable Subscription"`); nil for unknown values.
    public init?(appleType: String) {
        guard let match = Self.allCases.first(where: { $0.appleType == appleType }) else { return nil }
        self = match
    }

    /// Apple's JWS `type` string for this kind.
    public var appleType: String {
        switch self {
        case .autoRenewable: "Auto-Renewable Subscription"
        case .nonRenewing: "Non-Renewing Subscription"
        case .nonConsumable: "Non-Consumable"
        case .consumable: "Consumable"
        }
    }

    /// Maps a legacy receipt's attribute 1707; nil for unknown codes.
    ///
    /// - Important: Apple does not document attribute 1707. The mapping follows what receipts
    ///   show (every auto-renewable subscription in the real receipts under `shared/vectors`
    ///   carries `3`); decisions use the product catalogue, this is for diagnostics.
    public init?(receiptCode: Int64) {
        guard let match = Self.allCases.first(where: { $0.receiptCode == receiptCode }) else { return nil }
        self = match
    }

    /// The legacy receipt's attribute 1707 code for this kind (0 non-consumable, 1 consumable,
    /// 2 non-renewing, 3 auto-renewable).
    public var receiptCode: Int64 {
        switch self {
        case .nonConsumable: 0
        case .consumable: 1
        case .nonRenewing: 2
        case .autoRenewable: 3
        }
    }
}
