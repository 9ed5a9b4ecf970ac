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
        #expect(catalogue.products.count == 8)
        for id in ["com.demo.monthly.sub", "com.demo.quarterly.sub", "com.demo.yearly.sub"] {
            #expect(catalogue[id]?.type == .autoRenewable)
        }
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
    }

    @Test func errorMessagesNameTheProduct() {
        #expect(throws: ProductCatalogueError.self) {
            try load(#"{"products":{"com.x":{"type":"nonRenewing","entitlement":"x"}}}"#)
        }
        do {
            _ = try load(#"{"products":{"com.x":{"type":"nonRenewing","entitlement":"x"}}}"#)
        } catch {
            #expect("\(error)".contains("com.x"))
            #expect("\(error)".contains("durationMonths"))
        }
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
