import Foundation
import Testing
@testable import AppStore

/// ``ProductType``: receiptd's names as raw values, Apple's JWS spellings and legacy receipt codes
/// converted both ways, unknown values nil.
@Suite struct ProductTypeTests {
    @Test(arguments: [
        (ProductType.autoRenewable, "autoRenewable", "Auto-Renewable Subscription", Int64(3)),
        (.nonRenewing, "nonRenewing", "Non-Renewing Subscription", 2),
        (.nonConsumable, "nonConsumable", "Non-Consumable", 0),
        (.consumable, "consumable", "Consumable", 1),
    ])
    func spellings(type: ProductType, raw: String, apple: String, code: Int64) {
        #expect(type.rawValue == raw && ProductType(rawValue: raw) == type)
        #expect(type.appleType == apple && ProductType(appleType: apple) == type)
        #expect(type.receiptCode == code && ProductType(receiptCode: code) == type)
    }

    @Test func unknownOrForeignSpellingsAreNil() {
        #expect(ProductType(appleType: "consumable") == nil, "receiptd's name is not Apple's")
        #expect(ProductType(appleType: "Some Future Type") == nil)
        #expect(ProductType(rawValue: "Consumable") == nil, "Apple's name is not receiptd's")
        #expect(ProductType(receiptCode: 4) == nil && ProductType(receiptCode: -1) == nil)
    }

    @Test func transactionsAndReceiptsReadApplesSpellings() {
        var payload = JWSTransactionDecodedPayload(transactionId: "1", originalTransactionId: "1", bundleId: "b",
                                                   productId: "p", purchaseDate: Date(timeIntervalSince1970: 0),
                                                   rawType: "Non-Renewing Subscription", rawEnvironment: "Production")
        #expect(payload.type == .nonRenewing)
        payload.rawType = "nonRenewing"
        #expect(payload.type == nil)
        var purchase = InAppPurchaseReceipt()
        purchase.rawProductType = 1
        #expect(purchase.productType == .consumable)
        purchase.rawProductType = 9
        #expect(purchase.productType == nil)
    }
}
