/// `entitlement-state/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension EntitlementState: ContractWritable {
    /// About 400 bytes per purchase on top of the aggregate.
    var contractSizeEstimate: Int { 256 + 448 * purchases.count }

    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("asOf", timestamp: asOf)
        writer.member("bundleId", bundleId)
        writer.member("entitlement", entitlement)
        writer.member("hasAccess", hasAccess)
        writer.member("purchases", purchases)
        writer.member("schema", schema)
        writer.member("units", units)
        writer.member("userId", userId)
        writer.member("validUntil", timestamp: validUntil)
        writer.endObject()
    }
}
