/// The kind of subscription offer applied (`offerType`).
public enum OfferType: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// `1`: introductory offer.
    case introductoryOffer = 1
    /// `2`: promotional offer.
    case promotionalOffer = 2
    /// `3`: offer code.
    case subscriptionOfferCode = 3
    /// `4`: win-back offer.
    case winBackOffer = 4
}
