/// The transaction in fulfil's input, read without `Decoder` containers (mirrors `init(from:)`,
/// including its member order: `notification` comes before `isUpgraded` and `ownershipType`).
extension VerifiedTransaction: ContractReadable {
    init(reading r: ContractReader) throws {
        transactionId = try r.string("transactionId")
        originalTransactionId = try r.string("originalTransactionId")
        bundleId = try r.string("bundleId")
        productId = try r.string("productId")
        type = try r.string("type")
        quantity = try r.intIfPresent("quantity") ?? 1
        purchaseDate = try r.timestampIfPresent("purchaseDate")
        expiresDate = try r.timestampIfPresent("expiresDate")
        revocationDate = try r.timestampIfPresent("revocationDate")
        revocationReason = try r.intIfPresent("revocationReason")
        environment = try r.string("environment")
        signedDate = try r.timestampIfPresent("signedDate")
        appAccountToken = try r.stringIfPresent("appAccountToken")
        notification = try r.nestedIfPresent(NotificationSource.self, "notification")
        isUpgraded = try r.boolIfPresent("isUpgraded")
        ownershipType = try r.stringIfPresent("ownershipType")
    }
}
