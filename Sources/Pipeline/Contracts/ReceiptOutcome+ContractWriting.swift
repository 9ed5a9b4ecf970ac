/// `receipt-outcome/v1` written directly (see ``ContractWritable``); members in sorted key order.
extension ReceiptOutcome: ContractWritable {
    var contractSizeEstimate: Int { 256 }

    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("at", timestamp: at)
        writer.member("outcome", raw: outcome)
        writer.member("schema", schema)
        writer.member("stage", raw: stage)
        writer.member("submissionId", submissionId)
        writer.member("transactionId", transactionId)
        writer.endObject()
    }
}
