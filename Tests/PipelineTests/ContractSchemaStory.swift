import AppStore
import Foundation
@testable import Pipeline

/// The `receipt-verified/v1` inputs fulfil is run over for the schema samples, in order: a monthly
/// subscription bought, re-submitted, in grace period, in billing retry, recovered, downgrade
/// pending, auto-renew off, expired, refunded; an informational notification; consumables bought,
/// refunded and the refund reversed; a Sandbox non-renewing purchase; a Family Sharing purchase
/// claimed by a second user (transfer); an unknown product. Every ``NotificationEffect`` occurs.
enum Story {
    static let bundleId = ContractSamples.bundleId
    static func at(_ text: String) -> Date { ContractCoding.date(from: text)! }

    static let catalogue = try! ProductCatalogue(products: [
        CatalogueProduct(productId: "com.demo.monthly.sub", type: .autoRenewable, entitlement: "premium",
                         subscriptionGroup: "premium", level: 1),
        CatalogueProduct(productId: "com.demo.monthly.basic", type: .autoRenewable, entitlement: "premium",
                         subscriptionGroup: "premium", level: 2),
        CatalogueProduct(productId: "com.demo.onetime.quarterly", type: .nonRenewing, entitlement: "premium", durationMonths: 3),
        CatalogueProduct(productId: "com.demo.coins.100", type: .consumable, entitlement: "coins", unitsPerPurchase: 100),
        CatalogueProduct(productId: "com.demo.unlock.pro", type: .nonConsumable, entitlement: "pro"),
    ])

    static let subscription = VerifiedTransaction(
        transactionId: "2000000812345678", originalTransactionId: "2000000812345678", bundleId: bundleId,
        productId: "com.demo.monthly.sub", type: ProductType.autoRenewable.appleType, quantity: 1,
        purchaseDate: at("2026-11-30T05:00:00Z"), expiresDate: at("2026-12-30T05:00:00Z"), environment: "Production",
        signedDate: at("2026-11-30T05:00:02.417Z"), appAccountToken: "7e3f1c2a-5b9d-4e8f-a1b2-c3d4e5f6a7b8",
        isUpgraded: false, ownershipType: "PURCHASED")
    static let recovered = VerifiedTransaction(
        transactionId: "2000000823456789", originalTransactionId: "2000000812345678", bundleId: bundleId,
        productId: "com.demo.monthly.sub", type: ProductType.autoRenewable.appleType,
        purchaseDate: at("2027-01-08T05:00:00Z"), expiresDate: at("2027-02-08T05:00:00Z"), environment: "Production",
        signedDate: at("2027-01-08T05:00:03Z"), appAccountToken: "7e3f1c2a-5b9d-4e8f-a1b2-c3d4e5f6a7b8",
        isUpgraded: false, ownershipType: "PURCHASED")
    /// Apple gave no `signedDate`, ownership or upgrade flag (a legacy receipt's transaction).
    static let coins = VerifiedTransaction(
        transactionId: "2000000834567890", originalTransactionId: "2000000834567890", bundleId: bundleId,
        productId: "com.demo.coins.100", type: ProductType.consumable.appleType, quantity: 2,
        purchaseDate: at("2026-12-02T10:15:00.120Z"), signedDate: nil)
    static let quarterly = VerifiedTransaction(
        transactionId: "2000000845678901", originalTransactionId: "2000000845678901", bundleId: bundleId,
        productId: "com.demo.onetime.quarterly", type: ProductType.nonRenewing.appleType,
        purchaseDate: at("2026-12-05T00:00:00Z"), environment: "Sandbox", signedDate: at("2026-12-05T00:00:01Z"),
        ownershipType: "PURCHASED")
    static let pro = VerifiedTransaction(
        transactionId: "2000000856789012", originalTransactionId: "2000000856789012", bundleId: bundleId,
        productId: "com.demo.unlock.pro", type: ProductType.nonConsumable.appleType,
        purchaseDate: at("2026-12-06T08:00:00Z"), signedDate: at("2026-12-06T08:00:00.999Z"),
        ownershipType: "FAMILY_SHARED")
    static let gems = VerifiedTransaction(
        transactionId: "2000000867890123", originalTransactionId: "2000000867890123", bundleId: bundleId,
        productId: "com.demo.gems.500", type: ProductType.consumable.appleType,
        purchaseDate: at("2026-12-07T00:00:00Z"), signedDate: at("2026-12-07T00:00:00Z"))

    static let inputs: [ReceiptVerified] = [
        direct("app-7f3c9a1e", "player-7", .signedTransaction, "2026-11-30T06:00:00.031Z", subscription),
        direct("app-7f3c9a1e", "player-7", .signedTransaction, "2026-11-30T06:05:00Z", subscription),
        notified(1, subscription, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", .gracePeriod(until: at("2027-01-06T05:00:00Z")),
                 signed: "2026-12-30T05:00:04Z",
                 renewal: RenewalSnapshot(autoRenew: true, autoRenewProductId: "com.demo.monthly.sub",
                                          gracePeriodExpiresDate: at("2027-01-06T05:00:00Z"), isInBillingRetryPeriod: true)),
        notified(2, subscription, "DID_FAIL_TO_RENEW", nil, .billingRetry, signed: "2027-01-06T05:00:10Z",
                 renewal: RenewalSnapshot(autoRenew: true, isInBillingRetryPeriod: true)),
        notified(3, recovered, "DID_RENEW", "BILLING_RECOVERY", .transactionUpdate, signed: "2027-01-08T05:00:04Z",
                 renewal: RenewalSnapshot(autoRenew: true, autoRenewProductId: "com.demo.monthly.sub",
                                          isInBillingRetryPeriod: false)),
        notified(4, recovered, "DID_CHANGE_RENEWAL_PREF", "DOWNGRADE",
                 .renewalPreferenceChanged(autoRenewProductId: "com.demo.monthly.basic"), signed: "2027-01-15T09:30:00Z",
                 renewal: RenewalSnapshot(autoRenew: true, autoRenewProductId: "com.demo.monthly.basic")),
        notified(5, recovered, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", .renewalStatusChanged(autoRenew: false),
                 signed: "2027-01-20T18:45:12.5Z", renewal: RenewalSnapshot(autoRenew: false)),
        notified(6, recovered, "EXPIRED", "VOLUNTARY", .expire, signed: "2027-02-08T05:00:01Z",
                 renewal: RenewalSnapshot(autoRenew: false, expirationIntent: 1, isInBillingRetryPeriod: false)),
        notified(7, revoked(recovered, at: "2027-02-10T12:00:00Z", reason: 0), "REFUND", nil, .revoke,
                 signed: "2027-02-10T12:00:01Z"),
        notified(8, subscription, "CONSUMPTION_REQUEST", nil,
                 .informational(notificationType: "CONSUMPTION_REQUEST", subtype: nil), signed: nil),
        direct("lookup_0042", "Zoë ✓ 7", .transactionId, "2026-12-02T10:16:00Z", coins),
        notified(9, revoked(coins, at: "2026-12-20T00:00:00Z", reason: 1), "REFUND", nil, .revoke,
                 signed: "2026-12-20T00:00:02Z", renewal: RenewalSnapshot()),
        notified(10, coins, "REFUND_REVERSED", nil, .reinstate, signed: "2026-12-22T00:00:00Z"),
        direct("restore.2026-12-05", "player-7", .appReceipt, "2026-12-05T00:01:00Z", quarterly),
        direct("app-family-1", "player-8", .signedTransaction, "2026-12-06T08:01:00Z", pro),
        direct("app-family-2", "player-9", .signedTransaction, "2026-12-06T09:00:00Z", pro),
        direct("app-gems-1", "player-7", .signedTransaction, "2026-12-07T00:01:00Z", gems),
    ]

    static func direct(_ submissionId: String, _ userId: String, _ kind: SubmissionKind, _ verifiedAt: String,
                       _ transaction: VerifiedTransaction) -> ReceiptVerified {
        ReceiptVerified(submissionId: submissionId, bundleId: bundleId, userId: userId, kind: kind,
                        verifiedAt: at(verifiedAt), transaction: transaction)
    }

    /// `transaction` as carried by a user-less server notification (effect named as verify names it).
    static func notified(_ number: Int, _ transaction: VerifiedTransaction, _ type: String, _ subtype: String?,
                         _ effect: NotificationEffect, signed: String?, renewal: RenewalSnapshot? = nil) -> ReceiptVerified {
        var carried = transaction
        let uuid = "6f1e2d3c-0b4a-4c5d-8e9f-" + String(repeating: "0", count: 12 - String(number).count) + String(number)
        carried.notification = NotificationSource(notificationType: type, subtype: subtype, notificationUUID: uuid,
                                                  effect: effect.name, signedDate: signed.map(at), renewal: renewal)
        let verifiedAt = (signed.map(at) ?? transaction.purchaseDate ?? at("2026-11-30T06:00:00Z")).addingTimeInterval(2)
        return ReceiptVerified(submissionId: "asn:\(uuid)", bundleId: bundleId, userId: "", kind: .serverNotification,
                               verifiedAt: verifiedAt, transaction: carried)
    }

    static func revoked(_ transaction: VerifiedTransaction, at date: String, reason: Int) -> VerifiedTransaction {
        var revoked = transaction
        revoked.revocationDate = at(date)
        revoked.revocationReason = reason
        return revoked
    }

    /// Every ``NotificationEffect`` (they carry values, so there is no `allCases`).
    static let everyEffect: [NotificationEffect] = [
        .transactionUpdate, .revoke, .reinstate, .expire, .gracePeriod(until: nil), .billingRetry,
        .renewalPreferenceChanged(autoRenewProductId: nil), .renewalStatusChanged(autoRenew: true),
        .informational(notificationType: "TEST", subtype: nil),
    ]
}

/// One change of kind `kind` as fulfil would publish it: the purchase's resulting state, the
/// change, and the transaction that caused it.
struct ChangeExample {
    var change: LifecycleChange
    var state: PurchaseState
    var transaction: VerifiedTransaction

    init(_ kind: EntitlementChangeKind, index: Int, owner: OwnerKey) {
        let id = String(2_000_000_900_000_000 + index)
        let start = Story.at("2027-03-01T00:00:00Z"), end = Story.at("2027-04-01T00:00:00Z")
        let signed = Story.at("2027-03-10T00:00:00.250Z")
        let type: ProductType = kind == .clawback ? .consumable : .autoRenewable
        let (status, hasAccess): (PurchaseStatus, Bool) = switch kind {
        case .productReplaced, .expiration: (.expired, false)
        case .gracePeriod: (.gracePeriod, true)
        case .billingRetry: (.billingRetry, false)
        case .revocation, .clawback, .transferOut: (.revoked, false)
        default: (.active, true)
        }
        state = PurchaseState(
            originalTransactionId: id, bundleId: owner.bundleId, userId: owner.userId,
            entitlement: type == .consumable ? "coins" : "premium",
            productId: type == .consumable ? "com.demo.coins.100" : "com.demo.monthly.sub", productType: type,
            status: status, hasAccess: hasAccess, validUntil: type == .consumable ? nil : end, latestTransactionId: id,
            periodStart: start, expiresDate: type == .consumable ? nil : end, quantity: type == .consumable ? 100 : nil,
            autoRenew: type == .consumable ? nil : true, environment: "Production", signedDate: signed, version: index + 1)
        var notification: NotificationSource?
        switch kind {
        case .gracePeriod:
            state.gracePeriodExpiresDate = Story.at("2027-04-17T00:00:00Z")
            state.validUntil = state.gracePeriodExpiresDate
        case .expiration, .productReplaced:
            state.expirationReason = kind == .expiration ? "voluntary" : "upgraded"
            state.autoRenew = false
            state.validUntil = signed
        case .revocation, .clawback:
            state.revocationDate = signed
            state.revocationReason = kind == .clawback ? 1 : 0
            state.validUntil = signed
            notification = NotificationSource(notificationType: "REFUND", subtype: nil,
                                              notificationUUID: "9a8b7c6d-0000-4000-8000-00000000000\(index % 10)",
                                              effect: NotificationEffect.revoke.name, signedDate: signed)
        case .transferOut:
            state.userId = "player-10"
            state.revocationDate = signed
            state.validUntil = signed
        case .pendingProductChange: state.pendingProductId = "com.demo.monthly.basic"
        case .pastPeriodRefund: state.refundedTransactionIds = [String(2_000_000_800_000_000 + index)]
        case .autoRenewChange:
            state.autoRenew = false
            state.renewalSignedDate = signed
        case .extension: state.expiresDate = Story.at("2027-04-15T00:00:00Z")
        case .billingRetry: state.validUntil = signed
        default: break
        }
        transaction = VerifiedTransaction(
            transactionId: id, originalTransactionId: id, bundleId: owner.bundleId, productId: state.productId,
            type: type.appleType, quantity: 1, purchaseDate: start, expiresDate: state.expiresDate,
            revocationDate: state.revocationDate, revocationReason: state.revocationReason, environment: state.environment,
            signedDate: signed, notification: notification)
        change = LifecycleChange(kind: kind, owner: owner, entitlement: state.entitlement, productId: state.productId,
                                 status: status, hasAccess: state.hasAccess, validUntil: state.validUntil,
                                 quantity: state.quantity)
    }
}
