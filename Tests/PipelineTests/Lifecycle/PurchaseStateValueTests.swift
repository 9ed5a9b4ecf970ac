import Foundation
import Testing
@testable import Pipeline

/// ``PurchaseState`` keeps its fields behind one shared reference; it must still behave as a
/// value: a copy changes on its own, and equality compares fields, not references.
struct PurchaseStateValueTests {
    private func state() -> PurchaseState {
        PurchaseState(originalTransactionId: "1000", bundleId: "com.example.game", userId: "user-1", entitlement: "premium",
                      productId: "com.example.premium.monthly", productType: .autoRenewable, latestTransactionId: "1000",
                      environment: "Production", refundedTransactionIds: ["900"], version: 3)
    }

    @Test func aCopyChangesOnItsOwn() {
        let original = state()
        var copy = original
        copy.version += 1
        copy.refundedTransactionIds.append("1000")
        copy.owner = OwnerKey(bundleId: "com.example.game", userId: "user-2")
        #expect(original.version == 3)
        #expect(original.refundedTransactionIds == ["900"])
        #expect(original.userId == "user-1")
        #expect(copy.version == 4)
        #expect(copy.refundedTransactionIds == ["900", "1000"])
        #expect(copy.userId == "user-2")
        #expect(copy != original)
    }

    @Test func equalityComparesFields() {
        var built = state()
        #expect(built == state(), "separately built states with equal fields are equal")
        built.status = .expired
        #expect(built != state())
        built.status = .active
        #expect(built == state(), "and equal again once the field is back")
    }

    @Test func aStateSurvivesItsContractRoundTrip() throws {
        var original = state()
        original.expiresDate = Date(timeIntervalSince1970: 1_767_225_600)
        let decoded = try ContractCoding.decode(PurchaseState.self, from: try ContractCoding.encode(original))
        #expect(decoded == original)
    }
}
