/// A notification's renewal info, read without `Decoder` containers (mirrors `init(from:)`).
extension RenewalSnapshot: ContractReadable {
    init(reading r: ContractReader) throws {
        autoRenew = try r.boolIfPresent("autoRenew")
        autoRenewProductId = try r.stringIfPresent("autoRenewProductId")
        expirationIntent = try r.intIfPresent("expirationIntent")
        gracePeriodExpiresDate = try r.timestampIfPresent("gracePeriodExpiresDate")
        isInBillingRetryPeriod = try r.boolIfPresent("isInBillingRetryPeriod")
    }
}
