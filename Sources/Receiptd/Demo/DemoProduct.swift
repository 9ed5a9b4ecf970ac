import AppStore

/// The demo catalogue (`Config/catalogue.json`) as the generator knows it: what each product is
/// and unlocks, written down here rather than read from the file fulfil loads, so a catalogue
/// that stopped matching the demo's expectations shows up as wrong owner states.
struct DemoProduct: Sendable {
    let productId: String
    let type: ProductType
    let entitlement: String
    /// Period length: calendar months (non-renewing), or 30-day blocks (auto-renewable periods as the generator signs them).
    let months: Int
    /// Units per item (consumables).
    let units: Int?

    static let monthly = DemoProduct(productId: "com.demo.monthly.sub", type: .autoRenewable, entitlement: "premium", months: 1, units: nil)
    static let quarterly = DemoProduct(productId: "com.demo.quarterly.sub", type: .autoRenewable, entitlement: "premium", months: 3, units: nil)
    static let yearly = DemoProduct(productId: "com.demo.yearly.sub", type: .autoRenewable, entitlement: "premium", months: 12, units: nil)
    /// Level 1 of the `premium` group: a move to it from the others is an upgrade.
    static let vip = DemoProduct(productId: "com.demo.vip.monthly", type: .autoRenewable, entitlement: "vip", months: 1, units: nil)
    static let onetimeMonthly = DemoProduct(productId: "com.demo.onetime.monthly", type: .nonRenewing, entitlement: "premium", months: 1, units: nil)
    static let onetimeQuarterly = DemoProduct(productId: "com.demo.onetime.quarterly", type: .nonRenewing, entitlement: "premium", months: 3, units: nil)
    static let onetimeYearly = DemoProduct(productId: "com.demo.onetime.yearly", type: .nonRenewing, entitlement: "premium", months: 12, units: nil)
    static let coins = DemoProduct(productId: "com.demo.coins.100", type: .consumable, entitlement: "coins", months: 0, units: 100)
    static let pro = DemoProduct(productId: "com.demo.unlock.pro", type: .nonConsumable, entitlement: "pro", months: 0, units: nil)

    static let premiumSubscriptions = [monthly, quarterly, yearly]
    static let nonRenewing = [onetimeMonthly, onetimeQuarterly, onetimeYearly]
    static let byId = Dictionary(uniqueKeysWithValues: ([vip, coins, pro] + premiumSubscriptions + nonRenewing).map { ($0.productId, $0) })

    /// One auto-renewable period as the generator signs it.
    var period: Double { Double(months) * 30 * 86_400 }
}
