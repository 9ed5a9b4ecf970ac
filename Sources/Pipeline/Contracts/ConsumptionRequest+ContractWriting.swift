/// `consumption-request/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension ConsumptionRequest: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("bundleId", bundleId)
        writer.member("deadline", timestamp: deadline)
        writer.member("environment", environment)
        writer.member("originalTransactionId", originalTransactionId)
        writer.member("productId", productId)
        writer.member("requestId", requestId)
        writer.member("requestedAt", timestamp: requestedAt)
        writer.member("schema", schema)
        writer.member("transactionId", transactionId)
        writer.member("userId", userId)
        writer.endObject()
    }
}
