/// Details of some notification types (`subtype` of an App Store Server Notification V2).
///
/// Raw + typed like ``NotificationTypeV2``: notifications keep the raw string
/// (``ResponseBodyV2DecodedPayload/rawSubtype``) and this view is `nil` for unknown values.
public enum Subtype: String, Sendable, Hashable, CaseIterable, Codable {
    /// `INITIAL_BUY`: first purchase of a subscription (or of a subscription group).
    case initialBuy = "INITIAL_BUY"
    /// `RESUBSCRIBE`: subscribed again after expiry.
    case resubscribe = "RESUBSCRIBE"
    /// `DOWNGRADE`: a downgrade, effective at the next renewal.
    case downgrade = "DOWNGRADE"
    /// `UPGRADE`: an upgrade, effective immediately.
    case upgrade = "UPGRADE"
    /// `AUTO_RENEW_ENABLED`: auto-renew switched on.
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    /// `AUTO_RENEW_DISABLED`: auto-renew switched off (by the customer, or after a refund request).
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    /// `VOLUNTARY`: expired after the customer turned off renewal.
    case voluntary = "VOLUNTARY"
    /// `BILLING_RETRY`: expired after the billing retry period ended.
    case billingRetry = "BILLING_RETRY"
    /// `PRICE_INCREASE`: expired because the customer did not consent to a price increase.
    case priceIncrease = "PRICE_INCREASE"
    /// `GRACE_PERIOD`: renewal failed but the billing grace period keeps service on.
    case gracePeriod = "GRACE_PERIOD"
    /// `PENDING`: a price increase awaits the customer's consent.
    case pending = "PENDING"
    /// `ACCEPTED`: the customer accepted a price increase (or it needed no consent).
    case accepted = "ACCEPTED"
    /// `BILLING_RECOVERY`: a subscription that had failed to renew renewed.
    case billingRecovery = "BILLING_RECOVERY"
    /// `PRODUCT_NOT_FOR_SALE`: expired because the product was not for sale at renewal.
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    /// `SUMMARY`: a mass renewal-date extension completed (the payload carries `summary`).
    case summary = "SUMMARY"
    /// `FAILURE`: a renewal-date extension failed for one subscription.
    case failure = "FAILURE"
    /// `UNREPORTED`: an external purchase token was not reported.
    case unreported = "UNREPORTED"
    /// `ACTIVE_TOKEN_REMINDER`: reminder about an active external purchase token.
    case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
    /// `CREATED`: an external purchase token was created.
    case created = "CREATED"
}
