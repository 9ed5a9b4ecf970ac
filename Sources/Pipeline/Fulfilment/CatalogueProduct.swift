import AppStore

/// One entry of the ``ProductCatalogue``: how a product id turns into an entitlement.
public struct CatalogueProduct: Sendable, Equatable {
    /// The App Store product id, e.g. `com.demo.monthly.sub`.
    public var productId: String
    /// The product's kind; must agree with Apple's transaction `type`.
    public var type: ProductType
    /// The entitlement the product unlocks, e.g. `premium` or `coins`.
    public var entitlement: String
    /// Length of a non-renewing subscription in calendar months (only for ``ProductType/nonRenewing``).
    public var durationMonths: Int?
    /// Units granted per purchased item (only for ``ProductType/consumable``; default 1).
    public var unitsPerPurchase: Int?
    /// The App Store subscription group (only, and required, for ``ProductType/autoRenewable``):
    /// products of one group share an `originalTransactionId`, and moving between them is an
    /// upgrade, downgrade or crossgrade.
    public var subscriptionGroup: String?
    /// The product's level in its group as in App Store Connect: 1 is the highest service, so a
    /// move to a smaller level is an upgrade (effective now) and to a larger one a downgrade
    /// (effective at the next renewal); equal levels are a crossgrade.
    public var level: Int?

    /// Creates a product entry (validated when the catalogue is built).
    public init(productId: String, type: ProductType, entitlement: String,
                durationMonths: Int? = nil, unitsPerPurchase: Int? = nil, subscriptionGroup: String? = nil, level: Int? = nil) {
        self.productId = productId
        self.type = type
        self.entitlement = entitlement
        self.durationMonths = durationMonths
        self.unitsPerPurchase = unitsPerPurchase
        self.subscriptionGroup = subscriptionGroup
        self.level = level
    }
}
