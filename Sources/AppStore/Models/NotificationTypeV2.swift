/// The event an App Store Server Notification V2 reports (`notificationType`).
///
/// Notifications store the raw string (``ResponseBodyV2DecodedPayload/rawNotificationType``) and
/// expose this typed view, which is `nil` for a type this version does not know: new Apple types
/// never break decoding, and ``NotificationEffect`` maps them to
/// ``NotificationEffect/informational(notificationType:subtype:)``.
///
/// Every type Apple documents for App Store Server Notifications V2 (including the Advanced
/// Commerce API types `METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`, and `RESCIND_CONSENT`).
public enum NotificationTypeV2: String, Sendable, Hashable, CaseIterable, Codable {
    /// `SUBSCRIBED`: the customer subscribed (subtype `INITIAL_BUY` or `RESUBSCRIBE`).
    case subscribed = "SUBSCRIBED"
    /// `DID_RENEW`: a subscription renewed (subtype `BILLING_RECOVERY` after a failed renewal).
    case didRenew = "DID_RENEW"
    /// `DID_FAIL_TO_RENEW`: a renewal failed on billing; subtype `GRACE_PERIOD` keeps service on.
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    /// `GRACE_PERIOD_EXPIRED`: the billing grace period ended without a renewal.
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    /// `EXPIRED`: a subscription expired (`VOLUNTARY`, `BILLING_RETRY`, `PRICE_INCREASE`, `PRODUCT_NOT_FOR_SALE`).
    case expired = "EXPIRED"
    /// `DID_CHANGE_RENEWAL_PREF`: the customer changed plan (`UPGRADE` now, `DOWNGRADE` at renewal, none: downgrade cancelled).
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    /// `DID_CHANGE_RENEWAL_STATUS`: auto-renew switched (`AUTO_RENEW_ENABLED` / `AUTO_RENEW_DISABLED`).
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    /// `OFFER_REDEEMED`: the customer redeemed an offer code or promotional offer.
    case offerRedeemed = "OFFER_REDEEMED"
    /// `PRICE_INCREASE`: a price increase was announced (`PENDING`) or accepted (`ACCEPTED`).
    case priceIncrease = "PRICE_INCREASE"
    /// `REFUND`: Apple refunded a transaction (its `revocationDate` is set).
    case refund = "REFUND"
    /// `REFUND_DECLINED`: Apple declined a refund request.
    case refundDeclined = "REFUND_DECLINED"
    /// `REFUND_REVERSED`: Apple reversed an earlier refund; restore the content.
    case refundReversed = "REFUND_REVERSED"
    /// `REVOKE`: a Family Sharing entitlement is no longer available through sharing.
    case revoke = "REVOKE"
    /// `RENEWAL_EXTENDED`: the renewal date of one subscription was extended.
    case renewalExtended = "RENEWAL_EXTENDED"
    /// `RENEWAL_EXTENSION`: a mass renewal-date extension finished (`SUMMARY`) or failed for one subscription (`FAILURE`).
    case renewalExtension = "RENEWAL_EXTENSION"
    /// `CONSUMPTION_REQUEST`: a refund was requested; Apple asks for consumption data.
    case consumptionRequest = "CONSUMPTION_REQUEST"
    /// `ONE_TIME_CHARGE`: a consumable, non-consumable or non-renewing subscription was bought.
    case oneTimeCharge = "ONE_TIME_CHARGE"
    /// `TEST`: a test notification requested through the App Store Server API.
    case test = "TEST"
    /// `EXTERNAL_PURCHASE_TOKEN`: an external purchase token event (`UNREPORTED`, `ACTIVE_TOKEN_REMINDER`, `CREATED`).
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    /// `METADATA_UPDATE`: Advanced Commerce API subscription metadata changed.
    case metadataUpdate = "METADATA_UPDATE"
    /// `MIGRATION`: a subscription migrated to the Advanced Commerce API.
    case migration = "MIGRATION"
    /// `PRICE_CHANGE`: Advanced Commerce API subscription price changed.
    case priceChange = "PRICE_CHANGE"
    /// `RESCIND_CONSENT`: a parent or guardian withdrew consent for the app (carries `appData`).
    case rescindConsent = "RESCIND_CONSENT"
}
