/// Why the customer asked for a refund (`data.consumptionRequestReason` of `CONSUMPTION_REQUEST`).
public enum ConsumptionRequestReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// `UNINTENDED_PURCHASE`: the customer did not mean to buy.
    case unintendedPurchase = "UNINTENDED_PURCHASE"
    /// `FULFILLMENT_ISSUE`: the customer did not receive the content.
    case fulfillmentIssue = "FULFILLMENT_ISSUE"
    /// `UNSATISFIED_WITH_PURCHASE`: the customer was not satisfied.
    case unsatisfiedWithPurchase = "UNSATISFIED_WITH_PURCHASE"
    /// `LEGAL`: a legal reason.
    case legal = "LEGAL"
    /// `OTHER`: another reason.
    case other = "OTHER"
}
