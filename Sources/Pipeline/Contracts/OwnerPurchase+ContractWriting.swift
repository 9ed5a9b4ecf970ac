/// One purchase of the owner view written directly (see ``ContractWritable``); members in sorted key order.
extension OwnerPurchase: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("changedAt", timestamp: changedAt)
        writer.member("durationMonths", durationMonths)
        writer.member("environment", environment)
        writer.member("hasAccess", hasAccess)
        writer.member("originalTransactionId", originalTransactionId)
        writer.member("ownershipType", ownershipType)
        writer.member("periodStart", timestamp: periodStart)
        writer.member("productId", productId)
        writer.member("productType", raw: productType)
        writer.member("quantity", quantity)
        writer.member("status", raw: status)
        writer.member("validUntil", timestamp: validUntil)
        writer.member("version", version)
        writer.endObject()
    }
}
