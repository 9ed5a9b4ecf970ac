import AppStore
import Foundation
import Pipeline

/// The lifecycle stories the demo and chaos runs tell, each about fresh users, with every date a
/// whole second and every step signed after the one before it. A script states its steps'
/// verdicts and its owners' end states from what the story means to a customer ("refunded, then
/// the refund was reversed: access until the period ends"), never from fulfil's code.
///
/// Subscriptions here: renewals, a renewal notification before the app's own submission, grace
/// period, billing retry, voluntary expiry and extensions. Refunds, product changes and transfers
/// are in `LifecycleScripts+Changes.swift`; one-time products, Family Sharing and `TEST` in
/// `LifecycleScripts+OneTime.swift`.
extension SubmissionGenerator {
    static let day: TimeInterval = 86_400

    /// The next story, taken in turn so every one is told several times in a run.
    mutating func nextScript() throws -> LifecycleScript {
        scriptsStarted += 1
        // Starts 15 to 20 days ago: inside the run's test PKI (valid from 30 days ago), and a year
        // of periods still ends before it expires.
        let start = now.addingTimeInterval(-20 * Self.day + Double(Int.random(in: 0..<7200, using: &random)) * 60)
        switch scriptsStarted % 16 {
        case 0: return try renewals(start)
        case 1: return try renewalBeforeOwner(start)
        case 2: return try gracePeriod(start)
        case 3: return try billingRetry(start)
        case 4: return try voluntaryExpiry(start)
        case 5: return try renewalExtended(start)
        case 6: return try refundOfCurrentPeriod(start)
        case 7: return try refundOfPastPeriod(start)
        case 8: return try upgrade(start)
        case 9: return try downgrade(start)
        case 10: return try transfer(start)
        case 11: return try consumables(start)
        case 12: return try nonConsumable(start)
        case 13: return try nonRenewingStack(start)
        case 14: return try familySharing(start)
        default: return try testNotification()
        }
    }

    /// The first period of a subscription, submitted by the app (or forwarded `SUBSCRIBED`).
    mutating func subscribe(_ product: DemoProduct, _ start: Date, by user: String,
                            into script: inout LifecycleScript) throws -> SampleTransaction {
        let id = newTransactionId()
        let first = transaction(product, id: id, start: start, end: start.addingTimeInterval(product.period),
                                signed: start.addingTimeInterval(60))
        if Bool.random(using: &random) {
            script.add(try submitted(first, by: user, .grant))
        } else {
            script.add(try notified("SUBSCRIBED", "INITIAL_BUY", first, renewal: SampleRenewalInfo(of: first, signed: first.signedDate),
                                    by: user, signed: first.signedDate, status: 1, .grant))
        }
        return first
    }

    /// The period after `previous` (starting `delay` after its end), as Apple signs it at its start.
    mutating func nextPeriod(after previous: SampleTransaction, product: DemoProduct? = nil, delay: TimeInterval = 0) -> SampleTransaction {
        let product = product ?? DemoProduct.byId[previous.productId]!
        let start = previous.expiresDate!.addingTimeInterval(delay)
        return transaction(product, id: newTransactionId(), original: previous.originalTransactionId, start: start,
                           end: start.addingTimeInterval(product.period), signed: start.addingTimeInterval(60))
    }

    /// Subscribe, renew one to three times (one renewal notification may name no user), perhaps a
    /// notification that changes nothing: active until the last period ends.
    mutating func renewals(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let product = Bool.random(using: &random) ? DemoProduct.monthly : .quarterly
        var latest = try subscribe(product, start, by: user, into: &script)
        let count = Int.random(in: 1...3, using: &random)
        let unowned = Int.random(in: 0...count, using: &random)
        for index in 1...count {
            latest = nextPeriod(after: latest)
            script.add(try notified("DID_RENEW", nil, latest, renewal: SampleRenewalInfo(of: latest, signed: latest.signedDate),
                                    by: index == unowned ? nil : user, signed: latest.signedDate, status: 1, .renew))
        }
        if Bool.random(using: &random) {
            let (type, subtype) = Bool.random(using: &random) ? ("PRICE_INCREASE", "PENDING") : ("SUBSCRIPTION_OFFER_PREVIEW", nil)
            var renewal = SampleRenewalInfo(of: latest, signed: latest.signedDate)
            renewal.priceIncreaseStatus = 0
            script.add(try notified(type, subtype, latest, renewal: renewal, by: Bool.random(using: &random) ? user : nil,
                                    signed: latest.signedDate.addingTimeInterval(3600), status: 1, .informational))
        }
        script.finals = [.ends(latest.originalTransactionId, user, product, .active, until: latest.expiresDate)]
        return script
    }

    /// Apple's renewal notification (naming no user) is sent before the app submits the first
    /// period: it waits in the retry tiers (`owner-unknown`) until the owner is known, then renews.
    mutating func renewalBeforeOwner(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let id = newTransactionId()
        let first = transaction(.monthly, id: id, start: start, end: start.addingTimeInterval(DemoProduct.monthly.period),
                                signed: start.addingTimeInterval(60))
        let second = nextPeriod(after: first)
        script.add(try notified("DID_RENEW", nil, second, renewal: SampleRenewalInfo(of: second, signed: second.signedDate), by: nil,
                                signed: second.signedDate, status: 1, .renew))
        script.add(try submitted(first, by: user, .grant), waits: false)
        script.finals = [.ends(id, user, .monthly, .active, until: second.expiresDate)]
        return script
    }

    /// Renewal fails into the billing grace period (access until it ends), then Apple recovers
    /// the payment (a new period), or the grace period expires, or the story stops in grace.
    mutating func gracePeriod(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let first = try subscribe(.monthly, start, by: user, into: &script)
        let failed = first.expiresDate!.addingTimeInterval(3600)
        let graceEnd = first.expiresDate!.addingTimeInterval(16 * Self.day)
        var renewal = SampleRenewalInfo(of: first, signed: failed)
        (renewal.isInBillingRetryPeriod, renewal.gracePeriodExpiresDate, renewal.expirationIntent) = (true, graceEnd, 2)
        script.add(try notified("DID_FAIL_TO_RENEW", "GRACE_PERIOD", first, renewal: renewal, by: user, signed: failed, status: 4, .update))
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let recovered = nextPeriod(after: first, delay: 3 * Self.day)
            script.add(try notified("DID_RENEW", "BILLING_RECOVERY", recovered,
                                    renewal: SampleRenewalInfo(of: recovered, signed: recovered.signedDate), by: user,
                                    signed: recovered.signedDate, status: 1, .renew))
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .active, until: recovered.expiresDate)]
        case 1:
            renewal.signedDate = graceEnd.addingTimeInterval(60)
            script.add(try notified("GRACE_PERIOD_EXPIRED", nil, first, renewal: renewal, by: user, signed: renewal.signedDate,
                                    status: 3, .expire))
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .expired, until: nil)]
        default:
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .gracePeriod, until: graceEnd)]
        }
        return script
    }

    /// Renewal fails without a grace period (billing retry: no access), then the subscription
    /// expires, or Apple recovers the payment, or the story stops in billing retry.
    mutating func billingRetry(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let first = try subscribe(.monthly, start, by: user, into: &script)
        let failed = first.expiresDate!.addingTimeInterval(3600)
        var renewal = SampleRenewalInfo(of: first, signed: failed)
        (renewal.isInBillingRetryPeriod, renewal.expirationIntent) = (true, 2)
        script.add(try notified("DID_FAIL_TO_RENEW", nil, first, renewal: renewal, by: user, signed: failed, status: 3, .expire))
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            (renewal.autoRenewStatus, renewal.isInBillingRetryPeriod) = (0, false)
            let expired = first.expiresDate!.addingTimeInterval(20 * Self.day)
            script.add(try notified("EXPIRED", "BILLING_RETRY", first, renewal: renewal, by: user, signed: expired, status: 2, .expire))
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .expired, until: nil)]
        case 1:
            let recovered = nextPeriod(after: first, delay: 5 * Self.day)
            script.add(try notified("DID_RENEW", "BILLING_RECOVERY", recovered,
                                    renewal: SampleRenewalInfo(of: recovered, signed: recovered.signedDate), by: user,
                                    signed: recovered.signedDate, status: 1, .renew))
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .active, until: recovered.expiresDate)]
        default:
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .billingRetry, until: nil)]
        }
        return script
    }

    /// The customer turns auto-renew off: access to the period's end, then `EXPIRED/VOLUNTARY`
    /// (or the story stops before, or they turn it back on).
    mutating func voluntaryExpiry(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let product = DemoProduct.premiumSubscriptions[Int.random(in: 0..<2, using: &random)]
        let first = try subscribe(product, start, by: user, into: &script)
        var renewal = SampleRenewalInfo(of: first, signed: start.addingTimeInterval(5 * Self.day))
        renewal.autoRenewStatus = 0
        script.add(try notified("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", first, renewal: renewal, by: user,
                                signed: renewal.signedDate, status: 1, .update))
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            renewal.expirationIntent = 1
            script.add(try notified("EXPIRED", "VOLUNTARY", first, renewal: renewal, by: user,
                                    signed: first.expiresDate!.addingTimeInterval(60), status: 2, .expire))
            script.finals = [.ends(first.originalTransactionId, user, product, .expired, until: nil)]
        case 1:
            renewal.autoRenewStatus = 1
            script.add(try notified("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", first, renewal: renewal, by: user,
                                    signed: start.addingTimeInterval(8 * Self.day), status: 1, .update))
            script.finals = [.ends(first.originalTransactionId, user, product, .active, until: first.expiresDate)]
        default:
            script.finals = [.ends(first.originalTransactionId, user, product, .active, until: first.expiresDate)]
        }
        return script
    }

    /// Apple extends the current period (`RENEWAL_EXTENDED`: same transaction, later `expiresDate`).
    mutating func renewalExtended(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        var period = try subscribe(.monthly, start, by: user, into: &script)
        period.expiresDate = period.expiresDate!.addingTimeInterval(Double(Int.random(in: 1...30, using: &random)) * Self.day)
        let signed = start.addingTimeInterval(3 * Self.day)
        script.add(try notified("RENEWAL_EXTENDED", nil, period, renewal: SampleRenewalInfo(of: period, signed: signed), by: user,
                                signed: signed, status: 1, .renew))
        script.finals = [.ends(period.originalTransactionId, user, .monthly, .active, until: period.expiresDate)]
        return script
    }
}
