import Foundation
import Testing
@testable import Pipeline

/// Claims are tentative under a ``DeliveryScope`` and the stale rule of ``EntitlementRules``.
@Suite(.timeLimit(.minutes(1)))
struct LedgerClaimTests {
    private func grant(_ id: String = "t1") -> LedgerEvent {
        LedgerEvent(eventId: EntitlementChanged.eventId(transactionId: id, action: .grant), action: .grant, transactionId: id,
                    originalTransactionId: id, signedDate: Fixtures.now, validUntil: nil)
    }

    @Test func aClaimCountsOnlyOnceItsScopeSettlesDelivered() async throws {
        let ledger = InMemoryFulfilmentLedger()
        let scope = DeliveryScope(partition: 0)
        #expect(try await ledger.claim(grant(), scope: scope) == .firstTime)
        #expect(ledger.count == 0)  // pending, not applied
        scope.settle(delivered: true)
        #expect(ledger.count == 1)
        #expect(try await ledger.claim(grant(), scope: DeliveryScope(partition: 0)) == .duplicate)
    }

    @Test func aClaimWhoseOutputWasNotDeliveredIsWithdrawn() async throws {
        let ledger = InMemoryFulfilmentLedger()
        let failed = DeliveryScope(partition: 0)
        #expect(try await ledger.claim(grant(), scope: failed) == .firstTime)
        failed.settle(delivered: false)
        // The record's next attempt (a retry, a redelivery) emits: nothing was lost.
        #expect(try await ledger.claim(grant(), scope: DeliveryScope(partition: 0)) == .firstTime)
    }

    @Test func aConcurrentClaimWaitsForThePendingOneToSettle() async throws {
        let ledger = InMemoryFulfilmentLedger()
        let first = DeliveryScope(partition: 0)
        #expect(try await ledger.claim(grant(), scope: first) == .firstTime)
        let scopes = [DeliveryScope(partition: 0), DeliveryScope(partition: 0)]
        let results = try await withThrowingTaskGroup(of: (Int, ClaimResult).self) { group in
            for (index, scope) in scopes.enumerated() {
                group.addTask { (index, try await ledger.claim(self.grant(), scope: scope)) }
            }
            try await Task.sleep(for: .milliseconds(20))  // let both block on the pending claim
            first.settle(delivered: false)  // withdrawn: exactly one waiter takes the claim over
            var results: [ClaimResult] = []
            let (winner, result) = try await group.next()!
            results.append(result)
            scopes[winner].settle(delivered: true)  // its output was acknowledged: the other is a duplicate
            results.append(try await group.next()!.1)
            return results
        }
        #expect(results == [.firstTime, .duplicate])
    }

    @Test func aWaitingClaimIsCancellable() async throws {
        let ledger = InMemoryFulfilmentLedger()
        #expect(try await ledger.claim(grant(), scope: DeliveryScope(partition: 0)) == .firstTime)
        let waiter = Task { try await ledger.claim(grant(), scope: DeliveryScope(partition: 0)) }
        try await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }
}

/// ``EntitlementRules/isStale(_:after:revoked:)``, row by row.
@Suite struct StaleRuleTests {
    private let t0 = Fixtures.date("2026-10-01T00:00:00Z")
    private let t1 = Fixtures.date("2026-11-01T00:00:00Z")
    private let t2 = Fixtures.date("2026-12-01T00:00:00Z")

    private func update(_ action: EntitlementAction, id: String = "t2", signed: Date?, until: Date?) -> LedgerEvent {
        LedgerEvent(eventId: EntitlementChanged.eventId(transactionId: id, action: action), action: action, transactionId: id,
                    originalTransactionId: "t0", signedDate: signed, validUntil: until)
    }

    @Test func revocationsAreNeverStale() {
        let history = PurchaseHistory(newestSignedDate: t2, furthestValidUntil: t2)
        #expect(!EntitlementRules.isStale(update(.revoke, signed: t0, until: t0), after: history, revoked: false))
    }

    @Test func withoutHistoryOrDateOrWhenNewerNothingIsStale() {
        let history = PurchaseHistory(newestSignedDate: t1, furthestValidUntil: t2)
        #expect(!EntitlementRules.isStale(update(.renew, signed: t0, until: t0), after: nil, revoked: false))
        #expect(!EntitlementRules.isStale(update(.renew, signed: nil, until: t0), after: history, revoked: false))
        #expect(!EntitlementRules.isStale(update(.expire, signed: t1, until: t0), after: history, revoked: false))
        #expect(!EntitlementRules.isStale(update(.expire, signed: t2, until: t1), after: history, revoked: false))
    }

    @Test func olderUpdatesThatWouldMoveTheEntitlementBackAreStale() {
        let renewed = PurchaseHistory(newestSignedDate: t1, furthestValidUntil: t2)
        // An older renewal arriving after a newer one.
        #expect(EntitlementRules.isStale(update(.renew, id: "t1", signed: t0, until: t1), after: renewed, revoked: false))
        // An older expiration after a renewal.
        #expect(EntitlementRules.isStale(update(.expire, id: "t1", signed: t0, until: t1), after: renewed, revoked: false))
        // An older first purchase after a renewal.
        #expect(EntitlementRules.isStale(update(.grant, id: "t0", signed: t0, until: t1), after: renewed, revoked: false))
        // A consumable's purchase after its refund was applied (no end date never extends).
        let refunded = PurchaseHistory(newestSignedDate: t1, furthestValidUntil: nil)
        #expect(EntitlementRules.isStale(update(.grant, id: "t0", signed: t0, until: nil), after: refunded, revoked: true))
    }

    @Test func anOlderSignedUpdateThatExtendsAccessIsNotStaleUnlessItsTransactionWasRevoked() {
        // A later period whose JWS was signed before a re-signed older transaction was applied.
        let history = PurchaseHistory(newestSignedDate: t2, furthestValidUntil: t1)
        let later = update(.renew, id: "t3", signed: t1, until: t2)
        #expect(!EntitlementRules.isStale(later, after: history, revoked: false))
        #expect(EntitlementRules.isStale(later, after: history, revoked: true))
    }

    @Test func theStageSuppressesAnOlderRenewalButNotAnOlderRefund() async throws {
        let stage = FulfilStage(catalogue: Fixtures.catalogue, ledger: InMemoryFulfilmentLedger())
        let newer = Fixtures.transaction(id: "1003", original: "1001", purchase: "2027-01-30T05:00:00Z",
                                         expires: "2027-02-28T05:00:00Z", signed: "2027-01-30T05:00:00Z")
        let older = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                         expires: "2027-01-30T05:00:00Z", signed: "2026-12-30T05:00:00Z")
        let olderRefund = Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-12-30T05:00:00Z",
                                               expires: "2027-01-30T05:00:00Z", revoked: "2027-01-02T00:00:00Z",
                                               signed: "2027-01-02T00:00:00Z")
        let context = StageContext(now: Fixtures.date("2027-02-01T00:00:00Z"))
        guard case .emit = try await stage.process(Fixtures.verified(newer), context: context) else {
            Issue.record("newer renewal not emitted"); return
        }
        let stale = try await stage.process(Fixtures.verified(older), context: context)
        guard case .done(let outcome, let subject) = stale else { Issue.record("\(stale)"); return }
        #expect(outcome == .staleSuppressed)
        #expect(subject.transactionId == "1002")
        guard case .emit(let changes) = try await stage.process(Fixtures.verified(olderRefund), context: context) else {
            Issue.record("older refund suppressed"); return
        }
        #expect(changes.first?.action == .revoke)
        // ... and after the refund, that transaction's renewal never comes back.
        let again = try await stage.process(Fixtures.verified(older), context: context)
        guard case .done(.staleSuppressed, _) = again else { Issue.record("\(again)"); return }
    }
}
