import Foundation

/// A successful `verifyReceipt` answer (status 0, or 21006: valid with an expired iOS 6-style
/// subscription), with the transactions extracted.
///
/// Legacy fields are kept as Apple sends them (dates as millisecond strings, flags as `"true"`),
/// with typed views where useful. Unlike StoreKit 2 data this JSON is not signed: it is trusted
/// because it came over TLS from Apple's endpoint, so the endpoint URLs must be Apple's in production.
public struct VerifyReceiptResult: Sendable, Hashable {
    /// `0`, or `21006`.
    public var status: Int
    /// The endpoint that answered.
    public var environment: AppStoreEnvironment
    /// Raw `environment` member (`Production`, `Sandbox`).
    public var rawEnvironment: String?
    /// `receipt.bundle_id`.
    public var bundleId: String?
    /// `receipt.application_version`.
    public var applicationVersion: String?
    /// `receipt.original_application_version`.
    public var originalApplicationVersion: String?
    /// `receipt.receipt_creation_date_ms`.
    public var receiptCreationDateMs: String?
    /// `receipt.in_app`: the purchases in the receipt that was sent.
    public var inApp: [VerifyReceiptTransaction]
    /// `latest_receipt_info`: every transaction, including renewals after the receipt was made
    /// (receipts with auto-renewable subscriptions only).
    public var latestReceiptInfo: [VerifyReceiptTransaction]
    /// `pending_renewal_info`.
    public var pendingRenewalInfo: [VerifyReceiptPendingRenewal]
    /// `latest_receipt`: the newest base64 receipt, when Apple returned one.
    public var latestReceipt: String?

    /// Every distinct transaction (`latest_receipt_info` wins over `in_app` for the same
    /// `transaction_id`), oldest purchase first: what an entitlement decision needs.
    public var transactions: [VerifyReceiptTransaction] {
        var byId: [String: VerifyReceiptTransaction] = [:]
        for transaction in inApp { byId[transaction.transactionId] = transaction }
        for transaction in latestReceiptInfo { byId[transaction.transactionId] = transaction }
        return byId.values.sorted {
            ($0.purchaseDateMilliseconds ?? 0, $0.transactionId) < ($1.purchaseDateMilliseconds ?? 0, $1.transactionId)
        }
    }
}

/// One transaction of a legacy receipt (`in_app` or `latest_receipt_info` element).
public struct VerifyReceiptTransaction: Sendable, Hashable {
    /// `transaction_id`.
    public var transactionId: String
    /// `original_transaction_id`.
    public var originalTransactionId: String?
    /// `product_id`.
    public var productId: String
    /// `purchase_date_ms`: milliseconds since 1970 as a decimal string.
    public var purchaseDateMs: String?
    /// `original_purchase_date_ms`.
    public var originalPurchaseDateMs: String?
    /// `expires_date_ms` (subscriptions).
    public var expiresDateMs: String?
    /// `cancellation_date_ms` (refunds and revocations).
    public var cancellationDateMs: String?
    /// `cancellation_reason` (`"0"` other, `"1"` app issue).
    public var cancellationReason: String?
    /// `quantity`.
    public var quantity: Int?
    /// `in_app_ownership_type` (`PURCHASED`, `FAMILY_SHARED`).
    public var inAppOwnershipType: String?
    /// `web_order_line_item_id`.
    public var webOrderLineItemId: String?
    /// `is_trial_period` (`"true"`/`"false"`).
    public var isTrialPeriod: String?
    /// `subscription_group_identifier`.
    public var subscriptionGroupIdentifier: String?

    /// Creates a transaction (the decoder builds these; tests may too).
    public init(transactionId: String, originalTransactionId: String? = nil, productId: String,
                purchaseDateMs: String? = nil, originalPurchaseDateMs: String? = nil, expiresDateMs: String? = nil,
                cancellationDateMs: String? = nil, cancellationReason: String? = nil, quantity: Int? = nil,
                inAppOwnershipType: String? = nil, webOrderLineItemId: String? = nil, isTrialPeriod: String? = nil,
                subscriptionGroupIdentifier: String? = nil) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.purchaseDateMs = purchaseDateMs
        self.originalPurchaseDateMs = originalPurchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.cancellationDateMs = cancellationDateMs
        self.cancellationReason = cancellationReason
        self.quantity = quantity
        self.inAppOwnershipType = inAppOwnershipType
        self.webOrderLineItemId = webOrderLineItemId
        self.isTrialPeriod = isTrialPeriod
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
    }

    /// ``purchaseDateMs`` as an integer.
    public var purchaseDateMilliseconds: Int64? { purchaseDateMs.flatMap { Int64($0) } }
    /// ``purchaseDateMs`` as a date.
    public var purchaseDate: Date? { purchaseDateMilliseconds.map { Date(millisecondsSince1970: $0) } }
    /// ``expiresDateMs`` as a date.
    public var expiresDate: Date? { expiresDateMs.flatMap { Int64($0) }.map { Date(millisecondsSince1970: $0) } }
    /// ``cancellationDateMs`` as a date.
    public var cancellationDate: Date? { cancellationDateMs.flatMap { Int64($0) }.map { Date(millisecondsSince1970: $0) } }
}

/// One `pending_renewal_info` element: what happens at the next renewal of a subscription.
public struct VerifyReceiptPendingRenewal: Sendable, Hashable {
    /// `original_transaction_id`.
    public var originalTransactionId: String?
    /// `product_id`.
    public var productId: String?
    /// `auto_renew_product_id`.
    public var autoRenewProductId: String?
    /// `auto_renew_status` (`"1"` will renew, `"0"` turned off).
    public var autoRenewStatus: String?
    /// `expiration_intent`.
    public var expirationIntent: String?
    /// `is_in_billing_retry_period`.
    public var isInBillingRetryPeriod: String?
    /// `grace_period_expires_date_ms`.
    public var gracePeriodExpiresDateMs: String?
}
