import AppStore

/// The owners stage's input, read without `Decoder` containers (mirrors `init(from:)`).
extension OwnerPurchaseUpdate: ContractReadable {
    init(reading r: ContractReader) throws {
        schema = try r.schema(Self.schema)
        bundleId = try r.string("bundleId")
        userId = try r.string("userId")
        entitlement = try r.string("entitlement")
        purchase = try r.nested(OwnerPurchase.self, "purchase")
    }
}

/// The purchase in an owner update, read without `Decoder` containers (mirrors `init(from:)`).
extension OwnerPurchase: ContractReadable {
    init(reading r: ContractReader) throws {
        originalTransactionId = try r.string("originalTransactionId")
        productId = try r.string("productId")
        productType = try r.rawValue(ProductType.self, "productType")
        status = try r.rawValue(PurchaseStatus.self, "status")
        hasAccess = try r.bool("hasAccess")
        validUntil = try r.timestampIfPresent("validUntil")
        periodStart = try r.timestampIfPresent("periodStart")
        durationMonths = try r.intIfPresent("durationMonths")
        quantity = try r.intIfPresent("quantity")
        ownershipType = try r.string("ownershipType")
        environment = try r.string("environment")
        changedAt = try r.timestampIfPresent("changedAt")
        version = try r.int("version")
    }
}
