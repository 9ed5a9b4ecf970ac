/// The product type an in-app purchase receipt carries in attribute 1707.
///
/// - Important: Apple does not document attribute 1707. The mapping follows what receipts show:
///   every auto-renewable subscription in the real receipts under `shared/vectors` carries `3`.
///   The value is always kept raw (``InAppPurchaseReceipt/rawProductType``); use this typed view
///   for display and diagnostics, and the product catalogue for entitlement decisions.
public enum InAppPurchaseProductType: Int64, Sendable, Hashable, CaseIterable, Codable {
    /// `0`: non-consumable.
    case nonConsumable = 0
    /// `1`: consumable.
    case consumable = 1
    /// `2`: non-renewing subscription.
    case nonRenewingSubscription = 2
    /// `3`: auto-renewable subscription.
    case autoRenewableSubscription = 3
}
