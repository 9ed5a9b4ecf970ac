/// `owner-purchase/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension OwnerPurchaseUpdate: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("bundleId", bundleId)
        writer.member("entitlement", entitlement)
        writer.member("purchase", purchase)
        writer.member("schema", schema)
        writer.member("userId", userId)
        writer.endObject()
    }
}
