/// The transaction in fulfil's input, read without `Decoder` containers (mirrors `init(from:)`,
/// including its member order: `notification` comes before `isUpgraded` and `ownershipType`).
extension VerifiedTransaction: ContractReadable {
    init(reading r: ContractReader) throws {
        // Read into locals, then one call of the (not inlined) initializer: assigning the members
        // here built the transaction in a temporary and copied it out.
        let transactionId = try r.string("transactionId")
        let originalTransactionId = try r.string("originalTransactionId")
        let bundleId = try r.string("bundleId")
        let productId = try r.string("productId")
        let type = try r.string("type")
        let quantity = try r.intIfPresent("quantity") ?? 1
        let purchaseDate = try r.timestampIfPresent("purchaseDate")
        let expiresDate = try r.timestampIfPresent("expiresDate")
        let revocationDate = try r.timestampIfPresent("revocationDate")
        let revocationReason = try r.intIfPresent("revocationReason")
        let environment = try r.string("environment")
        let signedDate = try r.timestampIfPresent("signedDate")
        let appAccountToken = try r.stringIfPresent("appAccountToken")
        let notification = try r.nestedIfPresent(NotificationSource.self, "notification")
        let isUpgraded = try r.boolIfPresent("isUpgraded")
        let ownershipType = try r.stringIfPresent("ownershipType")
        self.init(transactionId: transactionId, originalTransactionId: originalTransactionId, bundleId: bundleId,
                  productId: productId, type: type, quantity: quantity, purchaseDate: purchaseDate,
                  expiresDate: expiresDate, revocationDate: revocationDate, revocationReason: revocationReason,
                  environment: environment, signedDate: signedDate, appAccountToken: appAccountToken,
                  isUpgraded: isUpgraded, ownershipType: ownershipType, notification: notification)
    }
}
