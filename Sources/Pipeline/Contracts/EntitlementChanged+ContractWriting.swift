/// `entitlement-changed/v2` written directly (see ``ContractWritable``); members in sorted key order.
extension EntitlementChanged: ContractWritable {
    /// Two dozen members plus the whole ``PurchaseState``.
    var contractSizeEstimate: Int { 2048 }

    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("action", raw: action)
        writer.member("autoRenew", autoRenew)
        writer.member("bundleId", bundleId)
        writer.member("change", raw: change)
        writer.member("effectiveAt", timestamp: effectiveAt)
        writer.member("entitlement", entitlement)
        writer.member("environment", environment)
        writer.member("eventId", eventId)
        writer.member("expirationReason", expirationReason)
        writer.member("hasAccess", hasAccess)
        writer.member("notificationSubtype", notificationSubtype)
        writer.member("notificationType", notificationType)
        writer.member("originalTransactionId", originalTransactionId)
        writer.member("ownershipType", ownershipType)
        writer.member("pendingProductId", pendingProductId)
        writer.member("productId", productId)
        writer.member("productType", raw: productType)
        writer.member("purchase", purchase)
        writer.member("quantity", quantity)
        writer.member("revocationReason", revocationReason)
        writer.member("schema", schema)
        writer.member("signedDate", timestamp: signedDate)
        writer.member("status", raw: status)
        writer.member("submissionId", submissionId)
        writer.member("transactionId", transactionId)
        writer.member("userId", userId)
        writer.member("validUntil", timestamp: validUntil)
        writer.endObject()
    }
}
