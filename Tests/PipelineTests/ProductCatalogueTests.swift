import Foundation
import Testing
@testable import Pipeline

@Suite struct ProductCatalogueTests {
    /// `Config/catalogue.json` of this package (two levels above the tests folder).
    static let exampleFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/catalogue.json").path

    private func load(_ json: String) throws -> ProductCatalogue {
        try ProductCatalogue(json: Array(json.utf8))
    }

    private func code(_ json: String) -> ProductCatalogueError.Code? {
        do {
            _ = try load(json)
            return nil
        } catch let error as ProductCatalogueError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: exampleFile)))
    func exampleCatalogueLoads() throws {
        let catalogue = try ProductCatalogue(contentsOfFile: Self.exampleFile)
        #expect(catalogue.products.count == 9)
        for (id, level) in [("com.demo.vip.monthly", 1), ("com.demo.yearly.sub", 2), ("com.demo.quarterly.sub", 3),
                            ("com.demo.monthly.sub", 4)] {
            #expect(catalogue[id]?.type == .autoRenewable)
            #expect(catalogue[id]?.subscriptionGroup == "premium")
            #expect(catalogue[id]?.level == level)
        }
        #expect(catalogue["com.demo.vip.monthly"]?.entitlement == "vip")
        #expect(catalogue["com.demo.onetime.monthly"]?.subscriptionGroup == nil)
        #expect(catalogue["com.demo.onetime.monthly"]?.durationMonths == 1)
        #expect(catalogue["com.demo.onetime.quarterly"]?.durationMonths == 3)
        #expect(catalogue["com.demo.onetime.yearly"]?.durationMonths == 12)
        #expect(catalogue["com.demo.coins.100"]?.type == .consumable)
        #expect(catalogue["com.demo.coins.100"]?.unitsPerPurchase == 100)
        #expect(catalogue["com.demo.unlock.pro"]?.type == .nonConsumable)
        #expect(catalogue["com.demo.unknown"] == nil)
    }

    @Test func minimalCatalogueWithoutSchema() throws {
        let catalogue = try load(#"{"products":{"a.b":{"type":"consumable","entitlement":"coins"}}}"#)
        #expect(catalogue["a.b"]?.unitsPerPurchase == nil)
    }

    @Test func validationErrors() {
        #expect(code("not json") == .invalidJSON)
        #expect(code(#"{"products":[]}"#) == .invalidJSON)
        #expect(code(#"{"products":{"a":{"entitlement":"x"}}}"#) == .invalidJSON)
        #expect(code(#"{"schema":"product-catalogue/v2","products":{"a":{"type":"consumable","entitlement":"x"}}}"#)
            == .unsupportedSchema)
        #expect(code(#"{"products":{}}"#) == .emptyCatalogue)
        #expect(code(#"{"products":{"bad id!":{"type":"consumable","entitlement":"x"}}}"#) == .invalidProductId)
        #expect(code(#"{"products":{"a":{"type":"subscription","entitlement":"x"}}}"#) == .unknownProductType)
        #expect(code(#"{"products":{"a":{"type":"consumable"}}}"#) == .invalidEntitlement)
        #expect(code(#"{"products":{"a":{"type":"consumable","entitlement":""}}}"#) == .invalidEntitlement)
        #expect(code(#"{"products":{"a":{"type":"nonRenewing","entitlement":"x"}}}"#) == .invalidDuration)
        #expect(code(#"{"products":{"a":{"type":"nonRenewing","durationMonths":0,"entitlement":"x"}}}"#) == .invalidDuration)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","durationMonths":1,"entitlement":"x"}}}"#) == .invalidDuration)
        #expect(code(#"{"products":{"a":{"type":"nonConsumable","unitsPerPurchase":5,"entitlement":"x"}}}"#) == .invalidUnits)
        #expect(code(#"{"products":{"a":{"type":"consumable","unitsPerPurchase":0,"entitlement":"x"}}}"#) == .invalidUnits)
        #expect(code(#"{"products":{"a":{"type":"consumable","entitlement":"coins/gold"}}}"#) == .invalidEntitlement)
    }

    @Test func autoRenewableProductsNeedAGroupAndALevelAndOthersMayNotHaveThem() {
        let valid = #"{"products":{"a":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"g","level":1}}}"#
        #expect(code(valid) == nil)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","entitlement":"x","level":1}}}"#) == .invalidSubscriptionGroup)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"","level":1}}}"#)
            == .invalidSubscriptionGroup)
        let longGroup = String(repeating: "g", count: 129)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"\#(longGroup)","level":1}}}"#)
            == .invalidSubscriptionGroup)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"g"}}}"#) == .invalidLevel)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"g","level":0}}}"#)
            == .invalidLevel)
        #expect(code(#"{"products":{"a":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"g","level":1001}}}"#)
            == .invalidLevel)
        #expect(code(#"{"products":{"a":{"type":"nonConsumable","entitlement":"x","subscriptionGroup":"g"}}}"#)
            == .invalidSubscriptionGroup)
        #expect(code(#"{"products":{"a":{"type":"consumable","entitlement":"x","level":2}}}"#) == .invalidLevel)
    }

    @Test(arguments: [
        (#"{"products":{"com.x":{"type":"nonRenewing","entitlement":"x"}}}"#, "durationMonths"),
        (#"{"products":{"com.x":{"type":"autoRenewable","entitlement":"x","level":1}}}"#, "subscriptionGroup"),
        (#"{"products":{"com.x":{"type":"autoRenewable","entitlement":"x","subscriptionGroup":"g","level":0}}}"#, "level"),
        (#"{"products":{"com.x":{"type":"nonRenewing","durationMonths":1,"entitlement":"x","level":1}}}"#, "level"),
        (#"{"products":{"com.x":{"type":"consumable","entitlement":"a/b"}}}"#, "entitlement"),
    ])
    func errorMessagesNameTheProductAndTheField(json: String, field: String) {
        let error = #expect(throws: ProductCatalogueError.self) { try load(json) }
        #expect(error.map { "\($0)".contains("\"com.x\"") } == true, "\(String(describing: error))")
        #expect(error.map { "\($0)".contains(field) } == true, "\(String(describing: error))")
    }

    @Test func duplicateProductsAreRefused() {
        #expect(throws: ProductCatalogueError.self) {
            try ProductCatalogue(products: [
                CatalogueProduct(productId: "a", type: .consumable, entitlement: "x"),
                CatalogueProduct(productId: "a", type: .nonConsumable, entitlement: "y"),
            ])
        }
    }

    @Test func missingFile() {
        #expect(throws: ProductCatalogueError(.unreadableFile, "cannot read /nonexistent/catalogue.json")) {
            try ProductCatalogue(contentsOfFile: "/nonexistent/catalogue.json")
        }
    }
}
