/// A verified transaction written directly (see ``ContractWritable``); members in sorted key order.
extension VerifiedTransaction: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("appAccountToken", appAccountToken)
        writer.member("bundleId", bundleId)
        writer.member("environment", environment)
        writer.member("expiresDate", timestamp: expiresDate)
        writer.member("isUpgraded", isUpgraded)
        writer.member("notification", notification)
        writer.member("originalTransactionId", originalTransactionId)
        writer.member("ownershipType", ownershipType)
        writer.member("productId", productId)
        writer.member("purchaseDate", timestamp: purchaseDate)
        writer.member("quantity", quantity)
        writer.member("revocationDate", timestamp: revocationDate)
        writer.member("revocationReason", revocationReason)
        writer.member("signedDate", timestamp: signedDate)
        writer.member("transactionId", transactionId)
        writer.member("type", type)
        writer.endObject()
    }
}
