import Foundation
import Testing
@testable import Pipeline

@Suite struct EntitlementRulesTests {
    private func decide(_ transaction: VerifiedTransaction) throws -> EntitlementRules.Decision {
        let product = try #require(Fixtures.catalogue[transaction.productId])
        return try EntitlementRules.decide(transaction, product: product, now: Fixtures.now).get()
    }

    @Test func autoRenewableFirstPeriodIsGrant() throws {
        let decision = try decide(Fixtures.transaction(id: "1001", original: "1001"))
        #expect(decision.action == .grant)
        #expect(decision.validUntil == Fixtures.date("2026-12-30T05:00:00Z"))
        #expect(decision.effectiveAt == Fixtures.date("2026-11-30T05:00:00Z"))
        #expect(decision.quantity == nil)
    }

    @Test func autoRenewableLaterPeriodIsRenew() throws {
        let decision = try decide(Fixtures.transaction(id: "1002", original: "1001"))
        #expect(decision.action == .renew)
        #expect(decision.validUntil == Fixtures.date("2026-12-30T05:00:00Z"))
    }

    @Test func autoRenewableExpiredAtSigningIsExpire() throws {
        let decision = try decide(Fixtures.transaction(id: "1002", original: "1001", purchase: "2026-10-30T05:00:00Z",
                                                       expires: "2026-11-30T05:00:00Z", signed: "2026-11-30T05:30:00Z"))
        #expect(decision.action == .expire)
        #expect(decision.validUntil == Fixtures.date("2026-11-30T05:00:00Z"))
        #expect(decision.effectiveAt == Fixtures.date("2026-11-30T05:00:00Z"))
        // Exactly at signing counts as expired too.
        let edge = try decide(Fixtures.transaction(expires: "2026-11-30T05:30:00Z", signed: "2026-11-30T05:30:00Z"))
        #expect(edge.action == .expire)
    }

    @Test func revocationWinsForEveryType() throws {
        let revokedAt = "2026-11-30T05:45:00Z"
        for (productId, type) in [("com.demo.monthly.sub", ProductType.autoRenewable),
                                  ("com.demo.onetime.monthly", .nonRenewing),
                                  ("com.demo.unlock.pro", .nonConsumable), ("com.demo.coins.100", .consumable)] {
            let decision = try decide(Fixtures.transaction(productId: productId, type: type, revoked: revokedAt))
            #expect(decision.action == .revoke, "\(productId)")
            #expect(decision.effectiveAt == Fixtures.date(revokedAt))
            #expect(decision.validUntil == Fixtures.date(revokedAt))
        }
    }

    @Test func nonRenewingAddsCalendarMonths() throws {
        let monthly = try decide(Fixtures.transaction(productId: "com.demo.onetime.monthly", type: .nonRenewing,
                                                      purchase: "2027-01-31T10:20:30Z", expires: nil))
        #expect(monthly.action == .grant)
        #expect(monthly.validUntil == Fixtures.date("2027-02-28T10:20:30Z"))
        let leap = try decide(Fixtures.transaction(productId: "com.demo.onetime.monthly", type: .nonRenewing,
                                                   purchase: "2028-01-31T00:00:00Z", expires: nil))
        #expect(leap.validUntil == Fixtures.date("2028-02-29T00:00:00Z"))
        let quarterly = try decide(Fixtures.transaction(productId: "com.demo.onetime.quarterly", type: .nonRenewing,
                                                        purchase: "2026-11-30T05:00:00Z", expires: nil))
        #expect(quarterly.validUntil == Fixtures.date("2027-02-28T05:00:00Z"))
        let yearly = try decide(Fixtures.transaction(productId: "com.demo.onetime.yearly", type: .nonRenewing,
                                                     purchase: "2028-02-29T12:00:00Z", expires: nil))
        #expect(yearly.validUntil == Fixtures.date("2029-02-28T12:00:00Z"))
    }

    @Test func nonConsumableIsForever() throws {
        let decision = try decide(Fixtures.transaction(productId: "com.demo.unlock.pro", type: .nonConsumable, expires: nil))
        #expect(decision.action == .grant)
        #expect(decision.validUntil == nil)
    }

    @Test func consumableGrantsQuantityTimesUnits() throws {
        let decision = try decide(Fixtures.transaction(productId: "com.demo.coins.100", type: .consumable, quantity: 3,
                                                       expires: nil))
        #expect(decision.action == .grant)
        #expect(decision.quantity == 300)
        #expect(decision.validUntil == nil)
    }

    @Test func typeMismatchIsRejected() throws {
        let product = try #require(Fixtures.catalogue["com.demo.unlock.pro"])
        let result = EntitlementRules.decide(Fixtures.transaction(productId: "com.demo.unlock.pro", type: .consumable),
                                             product: product, now: Fixtures.now)
        #expect(throws: Rejection.self) { try result.get() }
        if case .failure(let rejection) = result { #expect(rejection.reason == .productTypeMismatch) }
    }

    @Test func legacyTransactionWithoutAppleTypeFollowsTheCatalogue() throws {
        let product = try #require(Fixtures.catalogue["com.demo.unlock.pro"])
        var transaction = Fixtures.transaction(productId: "com.demo.unlock.pro", type: .nonConsumable, expires: nil)
        transaction.type = ""  // StoreKit 1 receipts usually carry no product type
        let decision = try EntitlementRules.decide(transaction, product: product, now: Fixtures.now).get()
        #expect(decision.action == .grant)
        transaction.type = "Something New"
        #expect(throws: Rejection.self) { try EntitlementRules.decide(transaction, product: product, now: Fixtures.now).get() }
    }

    @Test func invalidTransactionsAreRejected() throws {
        let sub = try #require(Fixtures.catalogue["com.demo.monthly.sub"])
        let noExpiry = EntitlementRules.decide(Fixtures.transaction(expires: nil), product: sub, now: Fixtures.now)
        if case .failure(let rejection) = noExpiry { #expect(rejection.reason == .invalidTransaction) } else { Issue.record("accepted") }
        let coins = try #require(Fixtures.catalogue["com.demo.coins.100"])
        let zero = EntitlementRules.decide(Fixtures.transaction(productId: "com.demo.coins.100", type: .consumable,
                                                                quantity: 0), product: coins, now: Fixtures.now)
        if case .failure(let rejection) = zero { #expect(rejection.reason == .invalidTransaction) } else { Issue.record("accepted") }
    }
}

@Suite struct UTCCalendarTests {
    @Test(arguments: [
        ("2027-01-31T08:00:00Z", 1, "2027-02-28T08:00:00Z"),
        ("2028-01-31T08:00:00Z", 1, "2028-02-29T08:00:00Z"),
        ("2026-03-31T23:59:59Z", 1, "2026-04-30T23:59:59Z"),
        ("2026-11-15T00:00:00Z", 3, "2027-02-15T00:00:00Z"),
        ("2026-12-31T12:00:00Z", 12, "2027-12-31T12:00:00Z"),
        ("2026-05-31T12:00:00Z", -3, "2026-02-28T12:00:00Z"),
        ("1969-12-31T23:00:00Z", 1, "1970-01-31T23:00:00Z"),
    ])
    func addingMonths(start: String, months: Int, expected: String) {
        #expect(UTCCalendar.adding(months: months, to: Fixtures.date(start)) == Fixtures.date(expected))
    }

    @Test func keepsMilliseconds() {
        let start = Fixtures.date("2026-01-31T08:00:00.250Z")
        #expect(ContractCoding.timestamp(UTCCalendar.adding(months: 1, to: start)) == "2026-02-28T08:00:00.250Z")
    }
}

@Suite struct FulfilStageTests {
    private func stage(ledger: any FulfilmentLedger = InMemoryFulfilmentLedger()) -> FulfilStage {
        FulfilStage(catalogue: Fixtures.catalogue, ledger: ledger)
    }

    @Test func emitsEntitlementChange() async throws {
        let result = try await stage().process(Fixtures.verified(Fixtures.transaction()), context: Fixtures.context())
        guard case .emit(let changes) = result, let change = changes.first else { Issue.record("\(result)"); return }
        #expect(changes.count == 1)
        #expect(change.action == .grant)
        #expect(change.entitlement == "premium")
        #expect(change.productType == .autoRenewable)
        #expect(change.eventId == SHA256.hexDigest("1001|grant"))
        #expect(change.environment == "Sandbox")
        #expect(change.submissionId == "sub-1")
        #expect(change.recordKey == "com.example.game/user-1")
        #expect(change.signedDate == Fixtures.date("2026-11-30T05:30:00Z"))
    }

    @Test func duplicateIsSuppressedWithTheSameEventId() async throws {
        let ledger = InMemoryFulfilmentLedger()
        let fulfil = stage(ledger: ledger)
        let input = Fixtures.verified(Fixtures.transaction())
        let first = try await fulfil.process(input, context: Fixtures.context())
        guard case .emit(let changes) = first else { Issue.record("\(first)"); return }
        // Resubmitted under another submission id: same transaction, same action, same event id.
        let again = try await fulfil.process(Fixtures.verified(Fixtures.transaction(), submissionId: "sub-2"),
                                             context: Fixtures.context())
        guard case .done(let outcome, let subject) = again else { Issue.record("\(again)"); return }
        #expect(outcome == .duplicateSuppressed)
        #expect(subject.transactionId == "1001")
        #expect(subject.submissionId == "sub-2")
        #expect(try await ledger.claim(LedgerEvent(changes[0]), scope: nil) == .duplicate)
    }

    @Test func revocationOfAGrantedTransactionIsANewEvent() async throws {
        let fulfil = stage()
        _ = try await fulfil.process(Fixtures.verified(Fixtures.transaction()), context: Fixtures.context())
        let result = try await fulfil.process(Fixtures.verified(Fixtures.transaction(revoked: "2026-11-30T05:50:00Z")),
                                              context: Fixtures.context())
        guard case .emit(let changes) = result else { Issue.record("\(result)"); return }
        #expect(changes[0].action == .revoke)
        #expect(changes[0].eventId == SHA256.hexDigest("1001|revoke"))
    }

    @Test func unknownProductIsRejected() async throws {
        let result = try await stage().process(Fixtures.verified(Fixtures.transaction(productId: "com.demo.nope")),
                                               context: Fixtures.context())
        guard case .reject(let reason, _, let subject) = result else { Issue.record("\(result)"); return }
        #expect(reason == .unknownProduct)
        #expect(subject.transactionId == "1001")
    }

    @Test func productTypeMismatchIsRejected() async throws {
        let result = try await stage().process(
            Fixtures.verified(Fixtures.transaction(productId: "com.demo.monthly.sub", type: .nonConsumable)),
            context: Fixtures.context())
        guard case .reject(let reason, _, _) = result else { Issue.record("\(result)"); return }
        #expect(reason == .productTypeMismatch)
    }

    @Test func bundleIdMismatchIsRejected() async throws {
        let result = try await stage().process(Fixtures.verified(Fixtures.transaction(bundleId: "com.other.app")),
                                               context: Fixtures.context())
        guard case .reject(let reason, _, _) = result else { Issue.record("\(result)"); return }
        #expect(reason == .bundleIdMismatch)
    }

    @Test func consumableQuantityIsInTheEvent() async throws {
        let result = try await stage().process(
            Fixtures.verified(Fixtures.transaction(productId: "com.demo.coins.100", type: .consumable, quantity: 2,
                                                   expires: nil)), context: Fixtures.context())
        guard case .emit(let changes) = result else { Issue.record("\(result)"); return }
        #expect(changes[0].quantity == 200)
        #expect(changes[0].productType == .consumable)
    }
}

@Suite struct InMemoryFulfilmentLedgerTests {
    private func event(_ id: String, signed: Date? = nil) -> LedgerEvent {
        LedgerEvent(eventId: id, action: .grant, transactionId: id, originalTransactionId: id, signedDate: signed,
                    validUntil: nil)
    }

    @Test func claimsOnceThenDuplicate() async throws {
        let ledger = InMemoryFulfilmentLedger()
        #expect(try await ledger.claim(event("a"), scope: nil) == .firstTime)
        #expect(try await ledger.claim(event("a"), scope: nil) == .duplicate)
        #expect(try await ledger.claim(event("b", signed: Fixtures.now), scope: nil) == .firstTime)
        #expect(ledger.count == 2)
    }

    @Test func isBoundedAndReclaimsForgottenIdsInsteadOfSuppressingThem() async throws {
        let ledger = InMemoryFulfilmentLedger(capacity: 2)
        let t0 = Fixtures.date("2026-11-01T00:00:00Z")
        let t1 = Fixtures.date("2026-11-02T00:00:00Z")
        let t2 = Fixtures.date("2026-11-03T00:00:00Z")
        #expect(try await ledger.claim(event("e0", signed: t0), scope: nil) == .firstTime)
        #expect(try await ledger.claim(event("e1", signed: t1), scope: nil) == .firstTime)
        #expect(try await ledger.claim(event("e2", signed: t2), scope: nil) == .firstTime)  // evicts e0
        #expect(ledger.count == 2)
        // Forgotten: re-emitted (same event id downstream), never silently dropped as stale.
        #expect(try await ledger.claim(event("e0", signed: t0), scope: nil) == .firstTime)
        #expect(try await ledger.claim(event("e2", signed: t2), scope: nil) == .duplicate)
    }

    @Test func isSafeUnderConcurrentClaims() async throws {
        let ledger = InMemoryFulfilmentLedger()
        let firsts = try await withThrowingTaskGroup(of: ClaimResult.self) { group in
            for _ in 0..<200 { group.addTask { try await ledger.claim(self.event("same"), scope: nil) } }
            return try await group.reduce(into: 0) { count, result in if result == .firstTime { count += 1 } }
        }
        #expect(firsts == 1)
    }
}
