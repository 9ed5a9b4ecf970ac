/// `receipt-rejected/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension ReceiptRejected: ContractWritable {
    /// The copied input record (up to the configured limit) dominates the size.
    var contractSizeEstimate: Int { original.utf8.count + detail.utf8.count + 512 }

    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("bundleId", bundleId)
        writer.member("detail", detail)
        writer.member("kind", kind)
        writer.member("original", original)
        writer.member("originalEncoding", raw: originalEncoding)
        writer.member("originalTruncated", originalTruncated)
        writer.member("payloadSHA256", payloadSHA256)
        writer.member("reason", raw: reason)
        writer.member("rejectedAt", timestamp: rejectedAt)
        writer.member("schema", schema)
        writer.member("stage", raw: stage)
        writer.member("submissionId", submissionId)
        writer.member("transactionId", transactionId)
        writer.member("userId", userId)
        writer.endObject()
    }
}
