import Foundation

/// What a verified App Store Server Notification V2 means for a customer's entitlement: the seam
/// between notification verification (here) and the fulfil stage's subscription lifecycle.
///
/// A pure mapping from a notification's type, subtype and nested renewal info; no I/O, no clock.
/// The fulfil stage switches over it; the nested transaction it acts on is
/// `notification.data?.transactionInfo` (``NotificationData/transactionInfo``), which
/// ``SignedDataVerifier/verifyAndDecodeNotification(_:)`` guarantees for every effect with
/// ``needsTransaction``, and the subscription is identified by the transaction or renewal info
/// (guaranteed for every effect with ``concernsSubscription``).
///
/// | `notificationType` | `subtype` | effect |
/// |---|---|---|
/// | `SUBSCRIBED` | `INITIAL_BUY`, `RESUBSCRIBE`, any | ``transactionUpdate`` |
/// | `DID_RENEW` | none, `BILLING_RECOVERY`, any | ``transactionUpdate`` |
/// | `OFFER_REDEEMED` | `DOWNGRADE` | ``renewalPreferenceChanged(autoRenewProductId:)`` |
/// | `OFFER_REDEEMED` | `INITIAL_BUY`, `RESUBSCRIBE`, `UPGRADE`, none, other | ``transactionUpdate`` |
/// | `DID_CHANGE_RENEWAL_PREF` | `UPGRADE` | ``transactionUpdate`` (effective now, new transaction) |
/// | `DID_CHANGE_RENEWAL_PREF` | `DOWNGRADE`, none (downgrade cancelled), other | ``renewalPreferenceChanged(autoRenewProductId:)`` |
/// | `DID_CHANGE_RENEWAL_STATUS` | `AUTO_RENEW_ENABLED` | ``renewalStatusChanged(autoRenew:)`` `true` |
/// | `DID_CHANGE_RENEWAL_STATUS` | `AUTO_RENEW_DISABLED` | ``renewalStatusChanged(autoRenew:)`` `false` |
/// | `DID_CHANGE_RENEWAL_STATUS` | none, other | from the renewal info's `autoRenewStatus`; ``informational(notificationType:subtype:)`` without it |
/// | `DID_FAIL_TO_RENEW` | `GRACE_PERIOD` | ``gracePeriod(until:)`` (renewal info `gracePeriodExpiresDate`) |
/// | `DID_FAIL_TO_RENEW` | none, other | ``billingRetry`` |
/// | `EXPIRED` | `VOLUNTARY`, `BILLING_RETRY`, `PRICE_INCREASE`, `PRODUCT_NOT_FOR_SALE`, none, other | ``expire`` |
/// | `GRACE_PERIOD_EXPIRED` | any | ``expire`` |
/// | `REFUND`, `REVOKE` | any | ``revoke`` |
/// | `REFUND_REVERSED` | any | ``reinstate`` |
/// | `RENEWAL_EXTENDED` | any | ``transactionUpdate`` (same `transactionId`, later `expiresDate`) |
/// | `ONE_TIME_CHARGE` | any | ``transactionUpdate`` |
/// | `REFUND_DECLINED`, `CONSUMPTION_REQUEST`, `PRICE_INCREASE` (`PENDING`, `ACCEPTED`), `RENEWAL_EXTENSION` (`SUMMARY`, `FAILURE`), `TEST`, `EXTERNAL_PURCHASE_TOKEN` (`UNREPORTED`, `ACTIVE_TOKEN_REMINDER`, `CREATED`), `METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`, `RESCIND_CONSENT` | any | ``informational(notificationType:subtype:)`` |
/// | unknown (future) type | any | ``informational(notificationType:subtype:)`` with the raw strings |
///
/// Notes for the fulfil stage:
/// - ``transactionUpdate`` means "apply the nested transaction as if it had been submitted": the
///   existing entitlement rules derive grant/renew/expire/revoke from its fields (a revoked nested
///   transaction still revokes). `RENEWAL_EXTENDED` keeps the `transactionId` and moves
///   `expiresDate`, so de-duplication of these updates must include `expiresDate`.
/// - ``reinstate`` re-grants a transaction whose refund was reversed; it needs its own event id
///   (the original grant's id was already used, and the revoke's after it).
/// - Unknown subtypes of a known type take that type's default row, never a stronger effect.
public enum NotificationEffect: Sendable, Hashable {
    /// Apply the nested transaction (grant, renew, or whatever its fields say).
    case transactionUpdate
    /// Revoke the entitlement of the nested transaction (refund, Family Sharing revoked).
    case revoke
    /// Restore the entitlement of the nested transaction (refund reversed).
    case reinstate
    /// The subscription ended; remove access.
    case expire
    /// Renewal failed but access continues until `until` (the grace period end, when known).
    case gracePeriod(until: Date?)
    /// Renewal failed without a grace period; Apple keeps retrying billing, access may stop.
    case billingRetry
    /// The product that renews next changed (or a pending downgrade was cancelled); no access change now.
    case renewalPreferenceChanged(autoRenewProductId: String?)
    /// Auto-renew switched on or off; no access change now.
    case renewalStatusChanged(autoRenew: Bool)
    /// Nothing to change; the raw type and subtype are kept for logs and future handling.
    case informational(notificationType: String, subtype: String?)

    /// The effect of a notification.
    /// - Parameter notification: A notification, normally from ``SignedDataVerifier/verifyAndDecodeNotification(_:)``.
    public init(_ notification: ResponseBodyV2DecodedPayload) {
        self = Self.effect(rawNotificationType: notification.rawNotificationType, rawSubtype: notification.rawSubtype,
                           renewalInfo: notification.data?.renewalInfo)
    }

    /// The effect of a type and subtype, as in the table above.
    /// - Parameters:
    ///   - rawNotificationType: `notificationType` as Apple spells it (unknown values allowed).
    ///   - rawSubtype: `subtype` as Apple spells it, if any.
    ///   - renewalInfo: The verified nested renewal info, used for the grace period end and for
    ///     `DID_CHANGE_RENEWAL_STATUS` without a known subtype.
    /// - Returns: The effect; ``informational(notificationType:subtype:)`` for unknown types.
    public static func effect(rawNotificationType: String, rawSubtype: String?,
                              renewalInfo: JWSRenewalInfoDecodedPayload?) -> NotificationEffect {
        let informational = NotificationEffect.informational(notificationType: rawNotificationType, subtype: rawSubtype)
        guard let type = NotificationTypeV2(rawValue: rawNotificationType) else { return informational }
        let subtype = rawSubtype.flatMap(Subtype.init(rawValue:))
        switch type {
        case .subscribed, .didRenew, .renewalExtended, .oneTimeCharge:
            return .transactionUpdate
        case .offerRedeemed:
            return subtype == .downgrade ? .renewalPreferenceChanged(autoRenewProductId: renewalInfo?.autoRenewProductId)
                                         : .transactionUpdate
        case .didChangeRenewalPref:
            return subtype == .upgrade ? .transactionUpdate
                                       : .renewalPreferenceChanged(autoRenewProductId: renewalInfo?.autoRenewProductId)
        case .didChangeRenewalStatus:
            switch subtype {
            case .autoRenewEnabled: return .renewalStatusChanged(autoRenew: true)
            case .autoRenewDisabled: return .renewalStatusChanged(autoRenew: false)
            default:
                guard let status = renewalInfo?.autoRenewStatus else { return informational }
                return .renewalStatusChanged(autoRenew: status == .on)
            }
        case .didFailToRenew:
            return subtype == .gracePeriod ? .gracePeriod(until: renewalInfo?.gracePeriodExpiresDate) : .billingRetry
        case .expired, .gracePeriodExpired:
            return .expire
        case .refund, .revoke:
            return .revoke
        case .refundReversed:
            return .reinstate
        case .refundDeclined, .consumptionRequest, .priceIncrease, .renewalExtension, .test, .externalPurchaseToken,
             .metadataUpdate, .migration, .priceChange, .rescindConsent:
            return informational
        }
    }

    /// Whether the effect acts on the nested transaction (``transactionUpdate``, ``revoke``, ``reinstate``).
    public var needsTransaction: Bool {
        switch self {
        case .transactionUpdate, .revoke, .reinstate: true
        default: false
        }
    }

    /// Whether the effect concerns one subscription, identified by the nested transaction or
    /// renewal info (every effect except ``informational(notificationType:subtype:)``).
    public var concernsSubscription: Bool {
        if case .informational = self { return false }
        return true
    }
}
