import AppStore
import Foundation
import Pipeline

/// Consumables, non-consumables, non-renewing subscriptions, Family Sharing and `TEST`
/// (see ``SubmissionGenerator/nextScript()``).
extension SubmissionGenerator {
    /// Two coin purchases; Apple asks about the second (`CONSUMPTION_REQUEST`, which changes
    /// nothing), then refunds it (its units are taken back) or declines the refund.
    mutating func consumables(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        var finals: [ExpectedPurchase] = []
        var bought: [SampleTransaction] = []
        for index in 0..<2 {
            let at = start.addingTimeInterval(Double(index) * Self.day)
            var coins = transaction(.coins, id: newTransactionId(), start: at, signed: at.addingTimeInterval(60))
            coins.quantity = Int.random(in: 1...3, using: &random)
            script.add(try submitted(coins, by: user, .grant))
            bought.append(coins)
            finals.append(ExpectedPurchase(originalTransactionId: coins.originalTransactionId, userId: user, entitlement: "coins",
                                           productType: .consumable, status: .active, units: coins.quantity * 100))
        }
        script.add(try notified("CONSUMPTION_REQUEST", nil, bought[1], by: nil, signed: start.addingTimeInterval(2 * Self.day),
                                consumptionRequestReason: "UNINTENDED_PURCHASE", .informational))
        let decidedAt = start.addingTimeInterval(3 * Self.day)
        if Bool.random(using: &random) {
            var refunded = bought[1]
            refunded.revocationDate = decidedAt
            script.add(try notified("REFUND", nil, refunded, by: Bool.random(using: &random) ? user : nil,
                                    signed: decidedAt.addingTimeInterval(60), .revoke))
            finals[1].status = .revoked
        } else {
            script.add(try notified("REFUND_DECLINED", nil, bought[1], by: nil, signed: decidedAt.addingTimeInterval(60), .informational))
        }
        script.finals = finals
        return script
    }

    /// A non-consumable bought, restored on another device (new transaction id, same original:
    /// nothing new), refunded, and perhaps the refund reversed.
    mutating func nonConsumable(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        let id = newTransactionId()
        let bought = transaction(.pro, id: id, start: start, signed: start.addingTimeInterval(60))
        script.add(try submitted(bought, by: user, .grant))
        let restoredAt = start.addingTimeInterval(2 * Self.day)
        var restored = transaction(.pro, id: newTransactionId(), original: id, start: restoredAt, signed: restoredAt.addingTimeInterval(60))
        restored.transactionReason = "PURCHASE"
        script.add(try submitted(restored, by: user, .duplicate))
        var refunded = bought
        refunded.revocationDate = start.addingTimeInterval(4 * Self.day)
        script.add(try notified("REFUND", nil, refunded, by: nil, signed: refunded.revocationDate!.addingTimeInterval(60), .revoke))
        if Int.random(in: 0..<3, using: &random) > 0 {
            script.add(try notified("REFUND_REVERSED", nil, bought, by: nil, signed: start.addingTimeInterval(6 * Self.day), .grant))
            script.finals = [.ends(id, user, .pro, .active, until: nil)]
        } else {
            script.finals = [.ends(id, user, .pro, .revoked, until: nil)]
        }
        return script
    }

    /// Two or three non-renewing subscriptions bought while the previous one still runs: they
    /// stack (each starts when the one before it ends). Sometimes the first is refunded, and the
    /// others move up into its place.
    mutating func nonRenewingStack(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let user = scriptUser("owner")
        var finals: [ExpectedPurchase] = []
        var first: SampleTransaction?
        for (index, offset) in [0, 10, 12].prefix(Int.random(in: 2...3, using: &random)).enumerated() {
            let product = DemoProduct.nonRenewing[Int.random(in: 0..<(index == 0 ? 2 : 3), using: &random)]
            let at = start.addingTimeInterval(Double(offset) * Self.day)
            let bought = transaction(product, id: newTransactionId(), start: at, signed: at.addingTimeInterval(60))
            script.add(try submitted(bought, by: user, .grant))
            first = first ?? bought
            finals.append(ExpectedPurchase(originalTransactionId: bought.originalTransactionId, userId: user, entitlement: "premium",
                                           productType: .nonRenewing, status: .active, periodStart: at,
                                           durationMonths: product.months, changedAt: bought.signedDate))
        }
        if let first, Int.random(in: 0..<3, using: &random) == 0 {
            var refunded = first
            refunded.revocationDate = start.addingTimeInterval(13 * Self.day)
            let signed = refunded.revocationDate!.addingTimeInterval(60)
            script.add(try notified("REFUND", nil, refunded, by: user, signed: signed, .revoke))
            (finals[0].status, finals[0].changedAt) = (.revoked, signed)
        }
        script.finals = finals
        return script
    }

    /// A family member's copy of a purchase (`FAMILY_SHARED`, its own transaction and original
    /// id) gives the member access; Apple's `REVOKE` (naming no user) ends it when the purchaser
    /// stops sharing, and the purchaser keeps theirs.
    mutating func familySharing(_ start: Date) throws -> LifecycleScript {
        var script = LifecycleScript()
        let (purchaser, member) = (scriptUser("purchaser"), scriptUser("member"))
        let product: DemoProduct = Bool.random(using: &random) ? .pro : .monthly
        let end = product.type == .autoRenewable ? start.addingTimeInterval(product.period) : nil
        let bought = transaction(product, id: newTransactionId(), start: start, end: end, signed: start.addingTimeInterval(60))
        script.add(try submitted(bought, by: purchaser, .grant))
        var shared = transaction(product, id: newTransactionId(), start: start, end: end, signed: start.addingTimeInterval(3600))
        shared.ownershipType = "FAMILY_SHARED"
        script.add(try submitted(shared, by: member, .grant))
        var revoked = shared
        revoked.revocationDate = start.addingTimeInterval(5 * Self.day)
        let signed = revoked.revocationDate!.addingTimeInterval(60)
        let renewal = product.type == .autoRenewable ? SampleRenewalInfo(of: shared, signed: signed) : nil
        script.add(try notified("REVOKE", nil, revoked, renewal: renewal, by: nil, signed: signed,
                                status: product.type == .autoRenewable ? 5 : nil, .revoke))
        script.finals = [.ends(bought.originalTransactionId, purchaser, product, .active, until: end),
                         .ends(shared.originalTransactionId, member, product, .revoked, until: nil)]
        return script
    }

    /// Apple's `TEST` notification: no transaction, so nothing to fulfil (`no-transactions`).
    mutating func testNotification() throws -> LifecycleScript {
        var script = LifecycleScript()
        script.add(try notified("TEST", nil, nil, by: nil, signed: now, .outcome("no-transactions")))
        return script
    }
}
