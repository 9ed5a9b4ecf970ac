import AppStore
import Foundation
import Testing
@testable import Pipeline

/// ``FulfilStage`` called directly: no runner, hence no delivery scope, so the in-memory ledger
/// applies each decision at once. The lifecycle's scenario tables (grace, billing retry, upgrades,
/// transfers, reorderings) are in `LifecycleScenarioTests`; these are the stage's own rules.
@Suite struct FulfilStageTests {
    private let ledger = KeyedStateStore<PurchaseState>()
    private var stage: FulfilStage { FulfilStage(catalogue: Fixtures.catalogue, ledger: ledger) }

    private func process(_ transaction: VerifiedTransaction, submissionId: String = "sub-1", userId: String = "user-1",
                         now: Date = Fixtures.now) async throws -> StageResult<FulfilOutput> {
        try await stage.process(Fixtures.verified(transaction, submissionId: submissionId, userId: userId),
                                context: StageContext(now: now))
    }

    /// The events of an emitted result (one per change), checking each is followed by its owner update.
    private func events(_ result: StageResult<FulfilOutput>) throws -> [EntitlementChanged] {
        let outputs = try result.outputs()
        #expect(outputs.count % 2 == 0)
        return try stride(from: 0, to: outputs.count, by: 2).map { index in
            let event = try #require(outputs[index].event)
            let update = try #require(outputs[index + 1].ownerUpdate)
            #expect(update.key == OwnerEntitlementKey(owner: event.owner, entitlement: event.entitlement))
            #expect(update.purchase.originalTransactionId == event.originalTransactionId)
            #expect(update.purchase.status == event.status && update.purchase.hasAccess == event.hasAccess)
            #expect(update.purchase.validUntil == event.validUntil && update.purchase.version == event.purchase.version)
            return event
        }
    }

    @Test func aFirstPurchaseEmitsOneEventAndOneOwnerUpdate() async throws {
        let outputs = try await process(Fixtures.transaction()).outputs()
        #expect(outputs.count == 2)
        let event = try #require(outputs.first?.event)
        #expect(event.schema == "entitlement-changed/v2")
        #expect(event.change == .purchase && event.action == .grant)
        #expect(event.status == .active && event.hasAccess)
        #expect(event.validUntil == Fixtures.date("2026-12-30T05:00:00Z"))
        #expect(event.effectiveAt == Fixtures.date("2026-11-30T05:00:00Z"))
        #expect(event.entitlement == "premium" && event.productId == "com.demo.monthly.sub")
        #expect(event.productType == .autoRenewable && event.quantity == nil)
        #expect(event.transactionId == "1001" && event.originalTransactionId == "1001")
        #expect(event.environment == "Sandbox" && event.ownershipType == "PURCHASED")
        #expect(event.submissionId == "sub-1" && event.notificationType == nil)
        #expect(event.signedDate == Fixtures.date("2026-11-30T05:30:00Z"))
        #expect(event.purchase.version == 1 && event.purchase.owner == event.owner)
        #expect(outputs[0].topic == .entitlementsChanged && outputs[0].messagePartitioning == .inputPartition)
        #expect(outputs[0].recordKey == "com.example.game/user-1")

        let update = try #require(outputs.last?.ownerUpdate)
        #expect(outputs[1].topic == .ownerUpdates && outputs[1].messagePartitioning == .byKey)
        #expect(outputs[1].recordKey == "com.example.game/user-1/premium")
        #expect(update.purchase.originalTransactionId == "1001" && update.purchase.productId == "com.demo.monthly.sub")
        #expect(update.purchase.status == .active && update.purchase.hasAccess)
        #expect(update.purchase.validUntil == event.validUntil && update.purchase.version == 1)
        #expect(update.purchase.changedAt == event.signedDate)
        #expect(ledger.value(of: "1001", in: 0) == event.purchase)
    }

    @Test func eventIdsAreDeterministicPerPurchaseVersionAndIndex() async throws {
        let input = Fixtures.transaction()
        let first = try events(await process(input))
        // Another worker (a fresh ledger) deciding the same input emits the same events.
        let elsewhere = try events(await FulfilStage(catalogue: Fixtures.catalogue, ledger: KeyedStateStore())
            .process(Fixtures.verified(input), context: Fixtures.context()))
        #expect(first == elsewhere)
        #expect(first.map(\.eventId) == [SHA256.hexDigest("1001|1|0")])
        #expect(first[0].eventId == EntitlementChanged.eventId(originalTransactionId: "1001", version: 1, index: 0))

        // A new change of the same transaction is a new version, hence a new id.
        let revoked = try events(await process(Fixtures.transaction(revoked: "2026-11-30T05:50:00Z")))
        #expect(revoked.map(\.eventId) == [SHA256.hexDigest("1001|2|0")])
        #expect(revoked.map(\.change) == [.revocation])
        #expect(revoked[0].action == .revoke && revoked[0].status == .revoked && !revoked[0].hasAccess)
        #expect(revoked[0].validUntil == Fixtures.date("2026-11-30T05:50:00Z"))
        #expect(revoked[0].effectiveAt == Fixtures.date("2026-11-30T05:50:00Z"))
        #expect(revoked[0].revocationReason == 0)
    }

    @Test func aResubmittedTransactionIsSuppressedAndChangesNothing() async throws {
        _ = try events(await process(Fixtures.transaction()))
        let applied = ledger.value(of: "1001", in: 0)
        let (outcome, subject) = try await process(Fixtures.transaction(), submissionId: "sub-2").outcome()
        #expect(outcome == .duplicateSuppressed)
        #expect(subject.transactionId == "1001" && subject.submissionId == "sub-2")
        #expect(ledger.value(of: "1001", in: 0) == applied)
    }

    @Test func aFirstSeenRevokedPurchaseIsRevokedForEveryType() async throws {
        let revokedAt = "2026-11-30T05:45:00Z"
        for (index, (productId, type)) in [("com.demo.monthly.sub", ProductType.autoRenewable),
                                           ("com.demo.onetime.monthly", .nonRenewing),
                                           ("com.demo.unlock.pro", .nonConsumable),
                                           ("com.demo.coins.100", .consumable)].enumerated() {
            let transaction = Fixtures.transaction(id: "50\(index)", productId: productId, type: type, revoked: revokedAt)
            let event = try #require(try events(await process(transaction)).first)
            #expect(event.action == .revoke && event.status == .revoked && !event.hasAccess, "\(productId)")
            #expect(event.effectiveAt == Fixtures.date(revokedAt), "\(productId)")
            #expect(event.validUntil == Fixtures.date(revokedAt), "\(productId)")
        }
    }

    @Test func unknownProductIsRejected() async throws {
        let (reason, detail, subject) = try await process(Fixtures.transaction(productId: "com.demo.nope")).rejection()
        #expect(reason == .unknownProduct)
        #expect(detail.contains("com.demo.nope"))
        #expect(subject.transactionId == "1001")
    }

    @Test func bundleIdMismatchIsRejected() async throws {
        let (reason, _, _) = try await process(Fixtures.transaction(bundleId: "com.other.app")).rejection()
        #expect(reason == .bundleIdMismatch)
    }

    @Test func productTypeMismatchIsRejectedButAMissingAppleTypeFollowsTheCatalogue() async throws {
        let contradicting = Fixtures.transaction(productId: "com.demo.monthly.sub", type: .nonConsumable)
        #expect(try await process(contradicting).rejection().reason == .productTypeMismatch)
        var unknown = Fixtures.transaction(id: "2001", productId: "com.demo.unlock.pro", type: .nonConsumable, expires: nil)
        unknown.type = "Something New"
        #expect(try await process(unknown).rejection().reason == .productTypeMismatch)
        var legacy = unknown
        legacy.type = ""  // StoreKit 1 receipts usually carry no product type
        #expect(try events(await process(legacy)).map(\.action) == [.grant])
        #expect(ledger.keyCount(in: 0) == 1)
    }

    @Test func invalidTransactionsAreRejectedAndNotRecorded() async throws {
        let invalid = [
            Fixtures.transaction(id: "1", expires: nil),  // auto-renewable without an end
            Fixtures.transaction(id: "2", productId: "com.demo.coins.100", type: .consumable, quantity: 0, expires: nil),
            Fixtures.transaction(id: "3", productId: "com.demo.coins.100", type: .consumable, quantity: .max, expires: nil),
            Fixtures.transaction(id: "4", productId: "com.demo.onetime.monthly", type: .nonRenewing, purchase: nil, expires: nil),
        ]
        for transaction in invalid {
            #expect(try await process(transaction).rejection().reason == .invalidTransaction, "\(transaction.transactionId)")
        }
        #expect(ledger.keyCount(in: 0) == 0)
    }

    @Test func consumableGrantsQuantityTimesUnitsPerPurchase() async throws {
        let outputs = try await process(Fixtures.transaction(productId: "com.demo.coins.100", type: .consumable,
                                                             quantity: 3, expires: nil)).outputs()
        let event = try #require(outputs.first?.event)
        #expect(event.action == .grant && event.entitlement == "coins" && event.productType == .consumable)
        #expect(event.quantity == 300 && event.purchase.quantity == 300)
        #expect(event.validUntil == nil && event.hasAccess)
        #expect(outputs.last?.ownerUpdate?.purchase.quantity == 300)
    }

    @Test(arguments: [
        ("com.demo.onetime.monthly", "2027-01-31T10:20:30Z", "2027-02-28T10:20:30Z"),
        ("com.demo.onetime.monthly", "2028-01-31T00:00:00Z", "2028-02-29T00:00:00Z"),
        ("com.demo.onetime.quarterly", "2026-11-30T05:00:00Z", "2027-02-28T05:00:00Z"),
        ("com.demo.onetime.yearly", "2028-02-29T12:00:00Z", "2029-02-28T12:00:00Z"),
    ])
    func nonRenewingAccessLastsCalendarMonths(productId: String, purchase: String, validUntil: String) async throws {
        let transaction = Fixtures.transaction(productId: productId, type: .nonRenewing, purchase: purchase, expires: nil,
                                               signed: purchase)
        let event = try #require(try events(await process(transaction)).first)
        #expect(event.change == .purchase && event.status == .active && event.hasAccess)
        #expect(event.validUntil == Fixtures.date(validUntil))
        #expect(event.effectiveAt == Fixtures.date(purchase))
    }

    @Test func aNonRenewingPurchaseFirstSeenAfterItsEndIsExpired() async throws {
        let transaction = Fixtures.transaction(productId: "com.demo.onetime.monthly", type: .nonRenewing,
                                               purchase: "2026-09-30T05:00:00Z", expires: nil, signed: "2026-11-30T05:30:00Z")
        let event = try #require(try events(await process(transaction)).first)
        #expect(event.change == .expiration && event.action == .expire && !event.hasAccess)
        #expect(event.validUntil == Fixtures.date("2026-10-30T05:00:00Z"))
    }

    @Test func aNonConsumableIsForeverAndItsRestoreUnderANewTransactionIdChangesNothing() async throws {
        let bought = Fixtures.transaction(id: "2001", productId: "com.demo.unlock.pro", type: .nonConsumable, expires: nil)
        let event = try #require(try events(await process(bought)).first)
        #expect(event.action == .grant && event.validUntil == nil && event.entitlement == "pro")
        let restored = Fixtures.transaction(id: "2002", original: "2001", productId: "com.demo.unlock.pro", type: .nonConsumable,
                                            purchase: "2026-12-15T00:00:00Z", expires: nil, signed: "2026-12-15T00:00:00Z")
        let (outcome, subject) = try await process(restored, submissionId: "restore").outcome()
        #expect(outcome == .duplicateSuppressed)
        #expect(subject.transactionId == "2002")
        #expect(ledger.value(of: "2001", in: 0)?.version == 1)
    }

    @Test func aNotificationWithoutAUserWaitsForTheOwnerThenAppliesToThem() async throws {
        var renewal = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                           expires: "2027-01-30T05:00:00Z", signed: "2026-12-30T05:00:00Z")
        renewal.notification = NotificationSource(notificationType: "DID_RENEW", subtype: nil, notificationUUID: "n-1",
                                                  effect: "transactionUpdate", signedDate: Fixtures.date("2026-12-30T05:00:01Z"))
        // Nobody recorded yet: transient, so the retry tiers hold it until the app's own submission.
        await #expect(throws: StageError(.transient, reason: .ownerUnknown,
                                         detail: "no owner recorded for the purchase yet, and no usable appAccountToken")) {
            try await process(renewal, userId: "")
        }
        #expect(ledger.keyCount(in: 0) == 0)
        _ = try events(await process(Fixtures.transaction()))
        let renewed = try events(await process(renewal, submissionId: "apple", userId: ""))
        #expect(renewed.map(\.change) == [.renewal])
        #expect(renewed.first?.owner == OwnerKey(bundleId: "com.example.game", userId: "user-1"))
        #expect(renewed.first?.notificationType == "DID_RENEW")
        #expect(renewed.first?.signedDate == Fixtures.date("2026-12-30T05:00:01Z"))
    }

    @Test func anInformationalNotificationEndsWithItsOutcome() async throws {
        var transaction = Fixtures.transaction(productId: "com.demo.not.in.catalogue")
        transaction.notification = NotificationSource(notificationType: "CONSUMPTION_REQUEST", subtype: nil,
                                                      notificationUUID: "n-2", effect: "informational")
        let (outcome, subject) = try await process(transaction, userId: "").outcome()
        #expect(outcome == .notificationInformational)
        #expect(subject.transactionId == "1001")
        #expect(ledger.keyCount(in: 0) == 0)
    }
}
