import AppStore
import Foundation
import Testing
@testable import Pipeline

/// Fulfil's and the owner view's contracts: `entitlement-changed/v2` (with the purchase state it
/// carries), `owner-purchase/v1`, `entitlement-state/v1`, their keys, and how ``FulfilOutput``
/// routes them.
@Suite struct EntitlementContractTests {
    private func json(_ value: some Encodable) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try ContractCoding.encode(value))) as? [String: Any])
    }

    /// The first purchase of 1001 (with the notification it arrived in), as the lifecycle decides it.
    private func firstPurchase() throws -> (PurchaseState, LifecycleChange, VerifiedTransaction) {
        var transaction = Fixtures.transaction()
        transaction.notification = NotificationSource(notificationType: "SUBSCRIBED", subtype: "INITIAL_BUY",
                                                      notificationUUID: "n-1", effect: "transactionUpdate",
                                                      renewal: RenewalSnapshot(autoRenew: true))
        let lifecycle = PurchaseLifecycle(policy: FulfilmentPolicy())
        let product = try #require(Fixtures.catalogue["com.demo.monthly.sub"])
        let decision = lifecycle.apply(transaction, product: product, claimant: OwnerKey(bundleId: "com.example.game", userId: "u"),
                                       to: nil, now: Fixtures.now)
        guard case .changed(let state, let changes) = decision, changes.count == 1 else {
            throw UnexpectedResult(description: "expected one change, got \(decision)")
        }
        return (state, changes[0], transaction)
    }

    private func ownerPurchase(_ id: String, type: ProductType = .nonRenewing, status: PurchaseStatus = .active,
                               hasAccess: Bool = true, validUntil: String? = nil, start: String? = nil, months: Int? = nil,
                               quantity: Int? = nil, version: Int = 1) -> OwnerPurchase {
        OwnerPurchase(originalTransactionId: id, productId: "p.\(id)", productType: type, status: status, hasAccess: hasAccess,
                      validUntil: validUntil.map(Fixtures.date), periodStart: start.map(Fixtures.date), durationMonths: months,
                      quantity: quantity, ownershipType: "PURCHASED", environment: "Production",
                      changedAt: start.map(Fixtures.date), version: version)
    }

    @Test func entitlementChangedV2FieldsAndDeterministicEventId() throws {
        let (state, change, transaction) = try firstPurchase()
        let event = EntitlementChanged(change: change, index: 0, purchase: state, transaction: transaction, submissionId: "s",
                                       effectiveAt: Fixtures.now)
        #expect(event.eventId == SHA256.hexDigest("1001|1|0"))
        #expect(event.eventId == EntitlementChanged.eventId(originalTransactionId: "1001", version: 1, index: 0))
        #expect(event.eventId != EntitlementChanged.eventId(originalTransactionId: "1001", version: 2, index: 0))
        #expect(event.eventId != EntitlementChanged.eventId(originalTransactionId: "1001", version: 1, index: 1))
        let object = try json(event)
        #expect(Set(object.keys) == ["schema", "eventId", "change", "action", "bundleId", "userId", "entitlement", "productId",
                                     "productType", "transactionId", "originalTransactionId", "quantity", "status", "hasAccess",
                                     "validUntil", "effectiveAt", "autoRenew", "pendingProductId", "expirationReason",
                                     "revocationReason", "ownershipType", "environment", "notificationType",
                                     "notificationSubtype", "submissionId", "signedDate", "purchase"])
        #expect(object["schema"] as? String == "entitlement-changed/v2")
        #expect(object["change"] as? String == "purchase" && object["action"] as? String == "grant")
        #expect(object["status"] as? String == "active" && object["hasAccess"] as? Bool == true)
        #expect(object["productType"] as? String == "autoRenewable")
        #expect(object["validUntil"] as? String == "2026-12-30T05:00:00Z")
        #expect(object["autoRenew"] as? Bool == true)
        #expect(object["notificationType"] as? String == "SUBSCRIBED")
        #expect(object["quantity"] is NSNull && object["expirationReason"] is NSNull && object["pendingProductId"] is NSNull)
        let purchase = try #require(object["purchase"] as? [String: Any])
        #expect(purchase["version"] as? Int == 1 && purchase["latestTransactionId"] as? String == "1001")
        #expect(try ContractCoding.decode(EntitlementChanged.self, from: try ContractCoding.encode(event)) == event)
        // What the ledger reads back is the purchase alone.
        #expect(try ContractCoding.decode(PurchaseOfEvent.self, from: try ContractCoding.encode(event)).purchase == state)

        var v1 = object
        v1["schema"] = "entitlement-changed/v1"
        let bytes = Array(try JSONSerialization.data(withJSONObject: v1))
        #expect(throws: DecodingError.self) { try ContractCoding.decode(EntitlementChanged.self, from: bytes) }
        #expect(throws: DecodingError.self) { try ContractCoding.decode(PurchaseOfEvent.self, from: bytes) }
    }

    @Test func purchaseStateWritesEveryFieldAndReadsOlderDocuments() throws {
        let (state, _, _) = try firstPurchase()
        var object = try json(state)
        #expect(Set(object.keys) == ["originalTransactionId", "bundleId", "userId", "entitlement", "productId", "productType",
                                     "status", "hasAccess", "validUntil", "latestTransactionId", "periodStart", "expiresDate",
                                     "durationMonths", "quantity", "gracePeriodExpiresDate", "autoRenew", "pendingProductId",
                                     "expirationReason", "revocationDate", "revocationReason", "ownershipType", "environment",
                                     "accessWithheld", "signedDate", "renewalSignedDate", "refundedTransactionIds", "version", "ownerSince"])
        #expect(object["revocationDate"] is NSNull && object["refundedTransactionIds"] as? [String] == [])
        #expect(try ContractCoding.decode(PurchaseState.self, from: try ContractCoding.encode(state)) == state)
        object.removeValue(forKey: "refundedTransactionIds")
        object.removeValue(forKey: "gracePeriodExpiresDate")
        let decoded = try ContractCoding.decode(PurchaseState.self, from: Array(try JSONSerialization.data(withJSONObject: object)))
        #expect(decoded == state)
    }

    @Test func ownerPurchaseUpdateContract() throws {
        let update = OwnerPurchaseUpdate(owner: OwnerKey(bundleId: "com.a", userId: "team/u"), entitlement: "premium",
                                         purchase: ownerPurchase("1", validUntil: "2027-01-01T00:00:00Z"))
        #expect(update.recordKey == "com.a/team/u/premium")
        #expect(OwnerPurchaseUpdate.outputTopic == .ownerUpdates && OwnerPurchaseUpdate.partitioning == .byKey)
        let object = try json(update)
        #expect(Set(object.keys) == ["schema", "bundleId", "userId", "entitlement", "purchase"])
        #expect(object["schema"] as? String == "owner-purchase/v1")
        let purchase = try #require(object["purchase"] as? [String: Any])
        #expect(Set(purchase.keys) == ["originalTransactionId", "productId", "productType", "status", "hasAccess", "validUntil",
                                       "periodStart", "durationMonths", "quantity", "ownershipType", "environment",
                                       "changedAt", "version"])
        #expect(purchase["periodStart"] is NSNull && purchase["productType"] as? String == "nonRenewing")
        #expect(try ContractCoding.decode(OwnerPurchaseUpdate.self, from: try ContractCoding.encode(update)) == update)
        var wrong = object
        wrong["schema"] = "owner-purchase/v2"
        #expect(throws: DecodingError.self) {
            try ContractCoding.decode(OwnerPurchaseUpdate.self, from: Array(try JSONSerialization.data(withJSONObject: wrong)))
        }
    }

    @Test func entitlementStateContractAndFold() throws {
        let key = OwnerEntitlementKey(owner: OwnerKey(bundleId: "com.a", userId: "u"), entitlement: "coins")
        var state = EntitlementState(key: key, purchases: [
            ownerPurchase("c1", type: .consumable, start: "2026-11-01T00:00:00Z", quantity: 300),
            ownerPurchase("c2", type: .consumable, status: .revoked, hasAccess: false, start: "2026-11-02T00:00:00Z", quantity: 100),
        ])
        #expect(state.recordKey == "com.a/u/coins")
        #expect(EntitlementState.outputTopic == .entitlementState && EntitlementState.partitioning == .inputPartition)
        #expect(state.hasAccess && state.validUntil == nil && state.units == 300)
        #expect(state.asOf == Fixtures.date("2026-11-02T00:00:00Z"))
        let object = try json(state)
        #expect(Set(object.keys) == ["schema", "bundleId", "userId", "entitlement", "hasAccess", "validUntil", "asOf", "units",
                                     "purchases"])
        #expect(object["schema"] as? String == "entitlement-state/v1")
        #expect(try ContractCoding.decode(EntitlementState.self, from: try ContractCoding.encode(state)) == state)
        // Per purchase the highest version wins; the same update again changes nothing, while a later
        // update of the same version (from the attempt that became durable) replaces the earlier one.
        let again = state.apply(ownerPurchase("c1", type: .consumable, start: "2026-11-01T00:00:00Z", quantity: 300))
        #expect(!again)
        var replaced = state
        let later = replaced.apply(ownerPurchase("c1", type: .consumable, status: .revoked, hasAccess: false, quantity: 300))
        #expect(later && !replaced.hasAccess && state.hasAccess)
        let newer = state.apply(ownerPurchase("c1", type: .consumable, status: .revoked, hasAccess: false,
                                              start: "2026-11-03T00:00:00Z", quantity: 300, version: 2))
        #expect(newer)
        #expect(!state.hasAccess && state.units == 0 && state.purchases.map(\.version) == [2, 1])
    }

    @Test func nonRenewingPurchasesStackInTheOwnerView() {
        let key = OwnerEntitlementKey(owner: OwnerKey(bundleId: "com.a", userId: "u"), entitlement: "premium")
        let state = EntitlementState(key: key, purchases: [
            ownerPurchase("b", validUntil: "2027-03-10T00:00:00Z", start: "2027-02-10T00:00:00Z", months: 1),
            ownerPurchase("a", validUntil: "2027-02-28T00:00:00Z", start: "2027-01-31T00:00:00Z", months: 1),
        ])
        #expect(state.purchases.map(\.originalTransactionId) == ["a", "b"])
        // b starts when a ends (Feb 28), so it runs to Mar 28.
        #expect(state.purchases.map(\.validUntil) == [Fixtures.date("2027-02-28T00:00:00Z"), Fixtures.date("2027-03-28T00:00:00Z")])
        #expect(state.hasAccess && state.validUntil == Fixtures.date("2027-03-28T00:00:00Z") && state.units == nil)
    }

    @Test func ownerEntitlementKeyIsUnambiguous() {
        let key = OwnerEntitlementKey(owner: OwnerKey(bundleId: "com.a.b", userId: "x/y"), entitlement: "premium")
        #expect(key.encoded == "com.a.b/x/y/premium" && key.description == key.encoded)
        #expect(OwnerEntitlementKey(encoded: key.encoded) == key)
        #expect(OwnerEntitlementKey(encoded: "com.a.b//premium")?.owner.userId == "")
        #expect(OwnerEntitlementKey(encoded: "no-slash") == nil)
        #expect(OwnerEntitlementKey(encoded: "com.a.b/premium") == nil)
    }

    @Test func fulfilOutputRoutesEventsByInputPartitionAndOwnerUpdatesByKey() throws {
        let (state, change, transaction) = try firstPurchase()
        let event = EntitlementChanged(change: change, index: 0, purchase: state, transaction: transaction, submissionId: "s",
                                       effectiveAt: Fixtures.now)
        let update = OwnerPurchaseUpdate(owner: change.owner, entitlement: change.entitlement, purchase: ownerPurchase("1001"))
        let outputs: [FulfilOutput] = [.event(event), .ownerUpdate(update)]
        #expect(outputs.map(\.topic) == [.entitlementsChanged, .ownerUpdates])
        #expect(outputs.map(\.messagePartitioning) == [.inputPartition, .byKey])
        #expect(outputs.map(\.recordKey) == ["com.example.game/u", "com.example.game/u/premium"])
        #expect(outputs[0].event == event && outputs[0].ownerUpdate == nil)
        #expect(outputs[1].ownerUpdate == update && outputs[1].event == nil)
        #expect(try ContractCoding.encode(outputs[0]) == (try ContractCoding.encode(event)))
        #expect(try ContractCoding.encode(outputs[1]) == (try ContractCoding.encode(update)))

        let router = RecordRouter(stage: .fulfil, topics: Topics(), maxOriginalBytes: 1024, maxErrorHeaderBytes: 1024)
        let record = InboundRecord(topic: "receipts.verified", partition: 5, offset: 9, key: nil, value: [],
                                   timestamp: Fixtures.now)
        let routed = try router.emit(outputs, from: record)
        #expect(routed.map(\.topic) == ["entitlements.changed", "entitlements.owner-updates"])
        #expect(routed.map(\.partition) == [5, nil])
    }
}
