/// A notification's renewal info written directly (see ``ContractWritable``); members in sorted key order.
extension RenewalSnapshot: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("autoRenew", autoRenew)
        writer.member("autoRenewProductId", autoRenewProductId)
        writer.member("expirationIntent", expirationIntent)
        writer.member("gracePeriodExpiresDate", timestamp: gracePeriodExpiresDate)
        writer.member("isInBillingRetryPeriod", isInBillingRetryPeriod)
        writer.endObject()
    }
}
