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

    /// Creates a product entry (validated when the catalogue is built).
    public init(productId: String, type: ProductType, entitlement: String,
                durationMonths: Int? = nil, unitsPerPurchase: Int? = nil) {
        self.productId = productId
        self.type = type
        self.entitlement = entitlement
        self.durationMonths = durationMonths
        self.unitsPerPurchase = unitsPerPurchase
    }
}
