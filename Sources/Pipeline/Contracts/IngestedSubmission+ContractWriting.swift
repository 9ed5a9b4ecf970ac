/// `receipt-ingested/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension IngestedSubmission: ContractWritable {
    /// The payload (a JWS with its certificate chain, or a whole app receipt) dominates the size.
    var contractSizeEstimate: Int { payloadText.utf8Count + 512 }

    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("bundleId", bundleId)
        writer.member("ingestedAt", timestamp: ingestedAt)
        writer.member("kind", raw: kind)
        writer.member("payload", payload)
        writer.member("payloadSHA256", payloadSHA256)
        writer.member("schema", schema)
        writer.member("submissionId", submissionId)
        writer.member("submittedAt", timestamp: submittedAt)
        writer.member("userId", userId)
        writer.endObject()
    }
}
