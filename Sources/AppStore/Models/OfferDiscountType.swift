/// The payment mode of a subscription offer (`offerDiscountType`).
public enum OfferDiscountType: String, Sendable, Hashable, CaseIterable, Codable {
    /// `FREE_TRIAL`.
    case freeTrial = "FREE_TRIAL"
    /// `PAY_AS_YOU_GO`.
    case payAsYouGo = "PAY_AS_YOU_GO"
    /// `PAY_UP_FRONT`.
    case payUpFront = "PAY_UP_FRONT"
    /// `ONE_TIME`.
    case oneTime = "ONE_TIME"
}
