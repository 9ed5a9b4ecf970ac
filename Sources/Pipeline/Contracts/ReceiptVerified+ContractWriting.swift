/// `receipt-verified/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension ReceiptVerified: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("bundleId", bundleId)
        writer.member("kind", raw: kind)
        writer.member("schema", schema)
        writer.member("submissionId", submissionId)
        writer.member("transaction", transaction)
        writer.member("userId", userId)
        writer.member("verifiedAt", timestamp: verifiedAt)
        writer.endObject()
    }
}
