import Foundation

/// The lifecycle meaning of one verified transaction: the notification effect it arrived with
/// (`NotificationSource.effect`, with its parameters from the renewal info), or
/// ``transactionUpdate`` for a transaction submitted directly.
enum LifecycleEffect: Equatable {
    case transactionUpdate
    case revoke
    case reinstate
    case expire(reason: String?)
    case gracePeriod(until: Date?)
    case billingRetry
    case renewalPreference(productId: String?)
    case renewalStatus(autoRenew: Bool)
    case informational

    /// The effect of a transaction, from its notification (if any).
    init(_ transaction: borrowing VerifiedTransaction) {  // borrowed: an initializer's argument is otherwise copied in
        guard let source = transaction.notification else {
            self = .transactionUpdate
            return
        }
        let renewal = source.renewal
        switch source.effect {
        case "transactionUpdate": self = .transactionUpdate
        case "revoke": self = .revoke
        case "reinstate": self = .reinstate
        case "expire": self = .expire(reason: Self.expirationReason(subtype: source.subtype,
                                                                    type: source.notificationType, renewal: renewal))
        case "gracePeriod": self = .gracePeriod(until: renewal?.gracePeriodExpiresDate)
        case "billingRetry": self = .billingRetry
        case "renewalPreferenceChanged": self = .renewalPreference(productId: renewal?.autoRenewProductId)
        case "renewalStatusChanged":
            if source.subtype == "AUTO_RENEW_ENABLED" { self = .renewalStatus(autoRenew: true) }
            else if source.subtype == "AUTO_RENEW_DISABLED" { self = .renewalStatus(autoRenew: false) }
            else if let on = renewal?.autoRenew { self = .renewalStatus(autoRenew: on) }
            else { self = .informational }
        default: self = .informational
        }
    }

    /// Why a subscription expired, in receiptd's words: from the `EXPIRED` subtype, else the
    /// renewal info's `expirationIntent`; `GRACE_PERIOD_EXPIRED` is a billing error.
    static func expirationReason(subtype: String?, type: String, renewal: RenewalSnapshot?) -> String? {
        switch subtype {
        case "VOLUNTARY": return "voluntary"
        case "BILLING_RETRY": return "billingError"
        case "PRICE_INCREASE": return "priceIncrease"
        case "PRODUCT_NOT_FOR_SALE": return "productNotAvailable"
        default: break
        }
        if type == "GRACE_PERIOD_EXPIRED" { return "billingError" }
        switch renewal?.expirationIntent {
        case 1: return "voluntary"
        case 2: return "billingError"
        case 3: return "priceIncrease"
        case 4: return "productNotAvailable"
        case 5: return "other"
        default: return nil
        }
    }
}
