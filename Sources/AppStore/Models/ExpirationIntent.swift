/// Why a subscription expired (`expirationIntent` of renewal info).
public enum ExpirationIntent: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// `1`: the customer cancelled.
    case customerCancelled = 1
    /// `2`: a billing error.
    case billingError = 2
    /// `3`: the customer did not consent to a price increase.
    case customerDidNotConsentToPriceIncrease = 3
    /// `4`: the product was not available for purchase at renewal.
    case productNotAvailable = 4
    /// `5`: another reason.
    case other = 5
}
