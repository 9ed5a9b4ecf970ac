import AppStore
import Foundation
import Observability
import Testing
@testable import Pipeline

/// The owner view (``OwnersStage`` over ``KeyedStateStore/ownerView(reader:topic:logger:)``): owner
/// updates folded into `entitlement-state/v1`, the store rebuilt from `entitlements.state`.
@Suite(.timeLimit(.minutes(1)))
struct OwnerViewStoreTests {
    let updates = "entitlements.owner-updates"
    let state = "entitlements.state"
    let owner = OwnerKey(bundleId: "com.example.game", userId: "user-1")

    /// The owner updates fulfil emits for `transactions` (user-1, all `premium`).
    private func ownerUpdates(_ transactions: [VerifiedTransaction]) async throws -> [OwnerPurchaseUpdate] {
        let fulfil = FulfilStage(catalogue: Fixtures.catalogue, ledger: KeyedStateStore())
        var updates: [OwnerPurchaseUpdate] = []
        for transaction in transactions {
            updates += try await fulfil.process(Fixtures.verified(transaction), context: Fixtures.context())
                .outputs().compactMap(\.ownerUpdate)
        }
        return updates
    }

    private var subscription: VerifiedTransaction { Fixtures.transaction(id: "1001") }
    private var pass: VerifiedTransaction {
        Fixtures.transaction(id: "3001", productId: "com.demo.onetime.monthly", type: .nonRenewing, expires: nil)
    }

    @Test func foldsNewerUpdatesAndEmitsNothingForOldOrRepeatedOnes() async throws {
        let updates = try await ownerUpdates([subscription, Fixtures.transaction(id: "1001", revoked: "2026-11-30T05:45:00Z")])
        #expect(updates.map(\.purchase.version) == [1, 2])
        let stage = OwnersStage(store: KeyedStateStore())
        let granted = try await stage.process(updates[0], context: Fixtures.context()).outputs()
        #expect(granted.count == 1)
        #expect(granted.first?.hasAccess == true && granted.first?.recordKey == "com.example.game/user-1/premium")
        let revoked = try await stage.process(updates[1], context: Fixtures.context()).outputs()
        #expect(revoked.first?.hasAccess == false && revoked.first?.purchases.map(\.status) == [.revoked])
        // A redelivered or reordered (older) update changes nothing and emits nothing.
        #expect(try await stage.process(updates[1], context: Fixtures.context()).outputs().isEmpty)
        #expect(try await stage.process(updates[0], context: Fixtures.context()).outputs().isEmpty)
    }

    /// After a crash, an attempt that never became durable may have left an update of the same
    /// version behind: the later update of that version (from the attempt that counted) replaces it.
    @Test func aLaterUpdateOfTheSameVersionReplacesAnEarlierOne() async throws {
        let updates = try await ownerUpdates([subscription])
        var orphan = try #require(updates.first)
        orphan.purchase.status = .billingRetry
        orphan.purchase.hasAccess = false
        let stage = OwnersStage(store: KeyedStateStore())
        #expect(try await stage.process(orphan, context: Fixtures.context()).outputs().first?.hasAccess == false)
        let counted = try await stage.process(updates[0], context: Fixtures.context()).outputs()
        #expect(counted.first?.hasAccess == true && counted.first?.purchases.map(\.status) == [.active])
        #expect(try await stage.process(updates[0], context: Fixtures.context()).outputs().isEmpty, "the same again: nothing")
    }

    @Test func theViewIsRebuiltFromEntitlementStateSoARedeliveredUpdateEmitsNothing() async throws {
        let transport = InMemoryTransport(partitions: [updates: 2, state: 2])
        let all = try await ownerUpdates([subscription, pass])
        try #require(all.count == 2)
        let (first, second) = (all[0], all[1])
        #expect(first.key == second.key)
        // A previous worker folded `first`, wrote the state, and died before storing the offset.
        var folded = EntitlementState(key: first.key, purchases: [])
        let older = folded
        let applied = folded.apply(first.purchase)
        #expect(applied)
        transport.produce(topic: state, key: nil, value: Array("not json".utf8), partition: 1)
        for value in [older, folded] {
            transport.produce(topic: state, key: Array(value.recordKey.utf8), value: try ContractCoding.encode(value), partition: 1)
        }
        for update in [first, second] {
            transport.produce(topic: updates, key: Array(update.recordKey.utf8), value: try ContractCoding.encode(update),
                              partition: 1)
        }
        let store = KeyedStateStore.ownerView(reader: transport.logReader, topic: state, logger: .disabled)
        let runner = StageRunner(stage: OwnersStage(store: store), source: transport.source(group: "owners", topics: [updates]),
                                 sink: transport.sink, assignmentHook: store, logger: .disabled, metrics: MetricsRegistry(),
                                 clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.storedOffset(group: "owners", topic: updates, partition: 1) == 1 })
            #expect(store.keyCount(in: 1) == 1)
        }
        let states = try transport.records(in: state, partition: 1).dropFirst(3).map {
            try ContractCoding.decode(EntitlementState.self, from: $0.value)
        }
        #expect(states.count == 1, "only the second update is new")
        #expect(states.first?.purchases.map(\.originalTransactionId) == ["1001", "3001"])
        #expect(states.first?.key == OwnerEntitlementKey(owner: owner, entitlement: "premium"))
        #expect(transport.records(in: "receipts.outcomes").isEmpty)
        #expect(transport.records(in: state, partition: 0).isEmpty)
    }
}
