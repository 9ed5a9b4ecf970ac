import AppStore
import FakeAppStore
import Foundation
import Testing

/// `fake-appstore --seed` reaches the generated transaction ids: two fakes with different seeds
/// never hand out the same ids, the same seed always the same ones.
@Suite struct FakeTransactionStoreSeedTests {
    private func firstIds(seed: UInt64) -> [String] {
        let store = FakeTransactionStore(seed: seed)
        return [AppStoreEnvironment.production, .sandbox].map {
            store.purchase(productId: "p", type: .consumable, environment: $0, purchaseDate: Date(timeIntervalSince1970: 0)).transactionId
        }
    }

    @Test func idsDependOnTheSeed() {
        #expect(firstIds(seed: 1) == firstIds(seed: 1))
        #expect(Set(firstIds(seed: 1)).isDisjoint(with: firstIds(seed: 2)))
        #expect(firstIds(seed: 0) == ["1000000000000001", "2000000000000001"])
    }
}
