/// Whether the customer consented to a subscription price increase (`priceIncreaseStatus`).
public enum PriceIncreaseStatus: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// `0`: not yet responded.
    case customerHasNotResponded = 0
    /// `1`: consented, or the increase needs no consent.
    case customerConsentedOrWasNotifiedWithoutNeedingConsent = 1
}
