import Foundation

/// One in-app purchase inside an app receipt (the SET held by one attribute 17).
///
/// Types: 1701 quantity, 1702 product id, 1703 transaction id, 1704 purchase date, 1705 original
/// transaction id, 1706 original purchase date, 1707 product type (undocumented), 1708 expires
/// date, 1711 web order line item id, 1712 cancellation date, 1713 trial period, 1719
/// introductory offer period, 1721 promotional offer id. Everything else (1709, 1710, 1714–1718,
/// 1722, … today) is kept raw in ``otherAttributes``.
///
/// A cancellation *reason* is not part of the signed receipt (Apple only ever returned it from
/// `verifyReceipt`); use the App Store Server API's `revocationReason` for it. Empty date strings,
/// which Apple writes for "not cancelled", decode as `nil`.
public struct InAppPurchaseReceipt: Sendable, Hashable {
    /// 1701, the number of items purchased.
    public var quantity: Int64?
    /// 1702, the product identifier.
    public var productId: String?
    /// 1703, the transaction identifier (a renewal or restore has its own).
    public var transactionId: String?
    /// 1704, when the item was purchased (for a renewal: when that period started).
    public var purchaseDate: Date?
    /// 1705, the transaction identifier of the original purchase (shared by all renewals).
    public var originalTransactionId: String?
    /// 1706, the date of the original purchase.
    public var originalPurchaseDate: Date?
    /// 1707 as signed (undocumented by Apple; see ``ProductType/init(receiptCode:)``).
    public var rawProductType: Int64?
    /// 1708, when the subscription period expires (auto-renewable subscriptions).
    public var expiresDate: Date?
    /// 1711, the subscription purchase event key across devices.
    public var webOrderLineItemId: Int64?
    /// 1712, when Apple refunded or revoked the transaction; treat it as never purchased.
    public var cancellationDate: Date?
    /// 1713, whether the period was a free trial.
    public var isTrialPeriod: Bool?
    /// 1719, whether the period was an introductory-price period.
    public var isInIntroOfferPeriod: Bool?
    /// 1721, the promotional offer redeemed, if any.
    public var promotionalOfferId: String?
    /// Every other attribute, raw and in receipt order.
    public var otherAttributes: [ReceiptAttribute]

    /// Creates an empty purchase (every attribute absent).
    public init() {
        otherAttributes = []
    }

    /// The typed product type, `nil` when absent or unknown.
    public var productType: ProductType? { rawProductType.flatMap(ProductType.init(receiptCode:)) }

    /// The raw attributes of one type that the model does not name.
    /// - Parameter type: An attribute type, e.g. `1710`.
    public func otherAttributes(ofType type: Int64) -> [ReceiptAttribute] {
        otherAttributes.filter { $0.type == type }
    }
}
