import AppStore
import Foundation
import Pipeline

extension SubmissionGenerator {
    /// A genuine transaction of the demo catalogue, first seen by receiptd, and the action fulfil
    /// must take: `grant` (a renewal of a purchase receiptd never saw is its first sighting too),
    /// `expire` for an already-expired subscription, `revoke` for a refunded one.
    mutating func genuineTransaction() -> (SampleTransaction, String) {
        nextTransaction += Int64.random(in: 1...9, using: &random)
        let id = String(nextTransaction)
        let day: TimeInterval = 86_400
        let purchase = now.addingTimeInterval(-Double(Int.random(in: 0...20, using: &random)) * day)
        let style = Int.random(in: 0..<100, using: &random)
        func transaction(_ product: DemoProduct) -> SampleTransaction {
            SampleTransaction(transactionId: id, originalTransactionId: id, bundleId: Self.bundleId, productId: product.productId,
                              type: product.type.appleType, purchaseDate: purchase, signedDate: now)
        }
        if style < 45 {
            let product = DemoProduct.premiumSubscriptions[Int.random(in: 0..<3, using: &random)]
            var tx = transaction(product)
            tx.expiresDate = purchase.addingTimeInterval(product.period)
            var action = "grant"
            if style < 12 {
                tx.originalTransactionId = String(nextTransaction - 1_000_000)
            } else if style < 16 {
                tx.expiresDate = now.addingTimeInterval(-day)
                tx.purchaseDate = now.addingTimeInterval(-Double(product.months) * 31 * day)
                action = "expire"
            } else if style < 20 {
                tx.revocationDate = now.addingTimeInterval(-3600)
                action = "revoke"
            }
            return (tx, action)
        } else if style < 70 {
            return (transaction(DemoProduct.nonRenewing[Int.random(in: 0..<3, using: &random)]), "grant")
        } else if style < 90 {
            var tx = transaction(.coins)
            tx.quantity = Int.random(in: 1...3, using: &random)
            return (tx, "grant")
        } else {
            return (transaction(.pro), "grant")
        }
    }

    /// Records where a transaction submitted on its own leaves its purchase: revoked if refunded,
    /// expired if its period (or non-renewing term) ended before Apple signed it, else active.
    mutating func expectIndependent(_ transaction: SampleTransaction, userId: String) {
        let product = DemoProduct.byId[transaction.productId]!
        var expected = ExpectedPurchase(originalTransactionId: transaction.originalTransactionId, userId: userId,
                                        entitlement: product.entitlement, productType: product.type, status: .active,
                                        changedAt: transaction.signedDate)
        switch product.type {
        case .autoRenewable:
            expected.validUntil = transaction.expiresDate
            if let end = transaction.expiresDate, end <= transaction.signedDate { expected.status = .expired }
        case .nonRenewing:
            (expected.periodStart, expected.durationMonths) = (transaction.purchaseDate, product.months)
            if CalendarMonths.adding(product.months, to: transaction.purchaseDate) <= transaction.signedDate { expected.status = .expired }
        case .consumable:
            expected.units = transaction.quantity * (product.units ?? 1)
        case .nonConsumable:
            break
        }
        if let revoked = transaction.revocationDate {
            (expected.status, expected.validUntil) = (.revoked, revoked)
        }
        owners.expect(expected)
    }

    /// The notification Apple would send for `transaction` (type from its state), with `nested`
    /// as `data.signedTransactionInfo`.
    mutating func notificationPayload(for transaction: SampleTransaction, nested: String) -> [UInt8] {
        let (type, subtype): (String, String?) =
            if transaction.revocationDate != nil { ("REFUND", nil) }
            else if transaction.type == ProductType.autoRenewable.appleType {
                if let expires = transaction.expiresDate, expires <= transaction.signedDate { ("EXPIRED", "VOLUNTARY") }
                else if transaction.transactionId == transaction.originalTransactionId { ("SUBSCRIBED", "INITIAL_BUY") }
                else { ("DID_RENEW", nil) }
            } else { ("ONE_TIME_CHARGE", nil) }
        var notification = SampleNotification(notificationType: type, subtype: subtype, notificationUUID: nextUUID(),
                                              signedDate: transaction.signedDate, bundleId: Self.bundleId)
        notification.environment = transaction.environment
        notification.signedTransactionInfo = nested
        return notification.payload()
    }

    /// A notification id, reproducible from the seed.
    mutating func nextUUID() -> String {
        let (high, low) = (random.next(), random.next())
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: high >> ($0 * 8)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> ($0 * 8)) }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6] & 0x0F | 0x40, bytes[7],
                           bytes[8] & 0x3F | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            .uuidString.lowercased()
    }
}
