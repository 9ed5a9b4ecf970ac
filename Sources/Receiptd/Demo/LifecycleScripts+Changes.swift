import AppStore
import Foundation
import Pipeline

/// Refunds, product changes and transfers of subscriptions (see ``SubmissionGenerator/nextScript()``).
extension SubmissionGenerator {
    /// Subscribe, renew, the current period is refunded (no access), and perhaps the refund is
    /// reversed (access back until the period ends).
    mutating func refundOfCurrentPeriod(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let first = try subscribe(.monthly, start, by: user, into: &script)
        let second = nextPeriod(after: first)
        script.add(try notified("DID_RENEW", nil, second, renewal: SampleRenewalInfo(of: second, signed: second.signedDate),
                                by: user, signed: second.signedDate, status: 1, .renew))
        var refunded = second
        refunded.revocationDate = second.purchaseDate.addingTimeInterval(2 * Self.day)
        refunded.revocationReason = Int.random(in: 0...1, using: &random)
        let refundedAt = refunded.revocationDate!.addingTimeInterval(60)
        let owner: String? = Bool.random(using: &random) ? user : nil
        script.add(try notified("REFUND", nil, refunded, renewal: SampleRenewalInfo(of: second, signed: refundedAt), by: owner,
                                signed: refundedAt, status: 5, .revoke))
        if Int.random(in: 0..<3, using: &random) > 0 {
            let reversedAt = second.purchaseDate.addingTimeInterval(5 * Self.day)
            script.add(try notified("REFUND_REVERSED", nil, second, renewal: SampleRenewalInfo(of: second, signed: reversedAt), by: owner,
                                    signed: reversedAt, status: 1, .grant))
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .active, until: second.expiresDate)]
        } else {
            script.finals = [.ends(first.originalTransactionId, user, .monthly, .revoked, until: nil)]
        }
        return script
    }

    /// Subscribe, renew, then the *first* period is refunded: the current one is paid, so access stays.
    mutating func refundOfPastPeriod(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let first = try subscribe(.monthly, start, by: user, into: &script)
        let second = nextPeriod(after: first)
        script.add(try submitted(second, by: user, .renew))
        var refunded = first
        refunded.revocationDate = second.purchaseDate.addingTimeInterval(3 * Self.day)
        let refundedAt = refunded.revocationDate!.addingTimeInterval(60)
        script.add(try notified("REFUND", nil, refunded, renewal: SampleRenewalInfo(of: second, signed: refundedAt),
                                by: Bool.random(using: &random) ? user : nil, signed: refundedAt, status: 1, .update))
        script.finals = [.ends(first.originalTransactionId, user, .monthly, .active, until: second.expiresDate)]
        return script
    }

    /// Monthly `premium` upgraded to `vip` mid-period: Apple's `DID_CHANGE_RENEWAL_PREF/UPGRADE`
    /// carries the new product's transaction (same original id), which ends `premium` now (the
    /// submission's first event) and starts `vip`; the app later submits the old period marked
    /// `isUpgraded`, which is old news.
    mutating func upgrade(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let first = try subscribe(.monthly, start, by: user, into: &script)
        let upgradedAt = start.addingTimeInterval(Double(Int.random(in: 2...20, using: &random)) * Self.day)
        let vip = transaction(.vip, id: newTransactionId(), original: first.originalTransactionId, start: upgradedAt,
                              end: upgradedAt.addingTimeInterval(DemoProduct.vip.period), signed: upgradedAt.addingTimeInterval(60))
        script.add(try notified("DID_CHANGE_RENEWAL_PREF", "UPGRADE", vip, renewal: SampleRenewalInfo(of: vip, signed: vip.signedDate),
                                by: user, signed: vip.signedDate, status: 1, .expire))
        var old = first
        (old.isUpgraded, old.signedDate) = (true, vip.signedDate.addingTimeInterval(60))
        script.add(try submitted(old, by: user, .stale))
        script.finals = [.ends(first.originalTransactionId, user, .monthly, .expired, until: nil),
                         .ends(first.originalTransactionId, user, .vip, .active, until: vip.expiresDate)]
        return script
    }

    /// `vip` with a downgrade to monthly `premium` pending (`DID_CHANGE_RENEWAL_PREF/DOWNGRADE`):
    /// nothing changes until the next `DID_RENEW`, which ends `vip` and starts `premium`; or the
    /// downgrade is cancelled, or the story stops while it is pending.
    mutating func downgrade(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let first = try subscribe(.vip, start, by: user, into: &script)
        var renewal = SampleRenewalInfo(of: first, signed: start.addingTimeInterval(10 * Self.day))
        renewal.autoRenewProductId = DemoProduct.monthly.productId
        script.add(try notified("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", first, renewal: renewal, by: user,
                                signed: renewal.signedDate, status: 1, .update))
        switch Int.random(in: 0..<3, using: &random) {
        case 0, 1:
            let monthly = nextPeriod(after: first, product: .monthly)
            script.add(try notified("DID_RENEW", nil, monthly, renewal: SampleRenewalInfo(of: monthly, signed: monthly.signedDate),
                                    by: user, signed: monthly.signedDate, status: 1, .expire))
            script.finals = [.ends(first.originalTransactionId, user, .vip, .expired, until: nil),
                             .ends(first.originalTransactionId, user, .monthly, .active, until: monthly.expiresDate)]
        default:
            renewal.autoRenewProductId = DemoProduct.vip.productId
            script.add(try notified("DID_CHANGE_RENEWAL_PREF", nil, first, renewal: renewal, by: user,
                                    signed: start.addingTimeInterval(12 * Self.day), status: 1, .update))
            script.finals = [.ends(first.originalTransactionId, user, .vip, .active, until: first.expiresDate)]
        }
        return script
    }

    /// A second user submits a purchase the first one owns (the same transaction, fetched again
    /// later, or the next period): with `fulfil.transferPolicy transfer` it moves to them; the
    /// submission's first event revokes the previous owner.
    mutating func transfer(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let (previous, next) = (scriptUser("a"), scriptUser("b"))
        if Bool.random(using: &random) {
            let first = try subscribe(.monthly, start, by: previous, into: &script)
            var claimed = first
            claimed.signedDate = start.addingTimeInterval(2 * Self.day)
            if Bool.random(using: &random) { claimed = nextPeriod(after: first) }
            script.add(try submitted(claimed, by: next, .revoke))
            script.finals = [.ends(first.originalTransactionId, previous, .monthly, .revoked, until: nil),
                             .ends(first.originalTransactionId, next, .monthly, .active, until: claimed.expiresDate)]
        } else {
            let id = newTransactionId()
            var bought = transaction(.pro, id: id, start: start, signed: start.addingTimeInterval(60))
            script.add(try submitted(bought, by: previous, .grant))
            bought.signedDate = start.addingTimeInterval(2 * Self.day)
            script.add(try submitted(bought, by: next, .revoke))
            script.finals = [.ends(id, previous, .pro, .revoked, until: nil),
                             .ends(id, next, .pro, .active, until: nil)]
        }
        return script
    }
}
