import AppStore
import Foundation

/// The products the app sells and what each one unlocks, loaded from JSON and validated up front
/// so a bad catalogue stops a worker at start-up rather than rejecting purchases at run time.
///
/// Format (`Config/catalogue.json`):
/// ```json
/// {
///   "schema": "product-catalogue/v1",
///   "products": {
///     "com.demo.monthly.sub":     { "type": "autoRenewable", "entitlement": "premium",
///                                   "subscriptionGroup": "premium", "level": 2 },
///     "com.demo.onetime.monthly": { "type": "nonRenewing", "durationMonths": 1, "entitlement": "premium" },
///     "com.demo.unlock.pro":      { "type": "nonConsumable", "entitlement": "pro" },
///     "com.demo.coins.100":       { "type": "consumable", "unitsPerPurchase": 100, "entitlement": "coins" }
///   }
/// }
/// ```
/// `schema` is optional (defaults to v1). `type` is one of ``ProductType``. `durationMonths`
/// (1…120) is required for, and only allowed on, `nonRenewing`; `unitsPerPurchase` (1…1,000,000,
/// default 1) is only allowed on `consumable`. `subscriptionGroup` (1…128 characters) and `level`
/// (1…1000, 1 the highest service) are required for, and only allowed on, `autoRenewable`. Product ids use Apple's charset (`A-Z a-z 0-9 . _ -`,
/// at most 255 characters); entitlements are 1…128 characters without `/` (it separates the owner
/// view's key) or control characters.
/// Unknown keys are ignored.
public struct ProductCatalogue: Sendable, Equatable {
    /// The schema identifier of the catalogue format.
    public static let schema = "product-catalogue/v1"

    private let productsById: [String: CatalogueProduct]

    /// Builds a catalogue from products.
    /// - Throws: ``ProductCatalogueError`` for the first invalid or duplicated product.
    public init(products: [CatalogueProduct]) throws {
        guard !products.isEmpty else {
            throw ProductCatalogueError(.emptyCatalogue, "the catalogue has no products")
        }
        var byId: [String: CatalogueProduct] = [:]
        for product in products {
            try Self.validate(product)
            guard byId[product.productId] == nil else {
                throw ProductCatalogueError(.duplicateProduct, "product \"\(product.productId)\" appears twice")
            }
            byId[product.productId] = product
        }
        productsById = byId
    }

    /// Parses and validates catalogue JSON.
    /// - Throws: ``ProductCatalogueError``.
    public init(json: [UInt8]) throws {
        let file: CatalogueFile
        do {
            file = try JSONDecoder().decode(CatalogueFile.self, from: Data(json))
        } catch let error as DecodingError {
            throw ProductCatalogueError(.invalidJSON, Self.describe(error))
        }
        if let schema = file.schema, schema != Self.schema {
            throw ProductCatalogueError(.unsupportedSchema, "schema must be \"\(Self.schema)\", found \"\(schema)\"")
        }
        var products: [CatalogueProduct] = []
        for (productId, entry) in file.products.sorted(by: { $0.key < $1.key }) {
            guard let type = ProductType(rawValue: entry.type) else {
                throw ProductCatalogueError(.unknownProductType, "product \"\(productId)\": type \"\(entry.type)\" is not one of "
                    + ProductType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            products.append(CatalogueProduct(productId: productId, type: type, entitlement: entry.entitlement ?? "",
                                             durationMonths: entry.durationMonths, unitsPerPurchase: entry.unitsPerPurchase,
                                             subscriptionGroup: entry.subscriptionGroup, level: entry.level))
        }
        try self.init(products: products)
    }

    /// Reads, parses and validates a catalogue file.
    /// - Throws: ``ProductCatalogueError`` (`unreadableFile` when the file cannot be read).
    public init(contentsOfFile path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProductCatalogueError(.unreadableFile, "cannot read \(path)")
        }
        try self.init(json: Array(data))
    }

    /// The product with this id, if the app sells it.
    public subscript(productId: String) -> CatalogueProduct? {
        productsById[productId]
    }

    /// All products, sorted by id.
    public var products: [CatalogueProduct] {
        productsById.values.sorted { $0.productId < $1.productId }
    }

    private static func validate(_ product: CatalogueProduct) throws {
        let id = product.productId
        guard !id.isEmpty, id.utf8.count <= 255,
              id.utf8.allSatisfy({ PayloadNormaliser.isAlphanumeric($0) || $0 == UInt8(ascii: ".")
                  || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else {
            throw ProductCatalogueError(.invalidProductId,
                                        "product id \"\(id.prefix(64))\" must be 1-255 characters of A-Z a-z 0-9 . _ -")
        }
        let entitlement = product.entitlement
        guard !entitlement.isEmpty, entitlement.count <= 128, !entitlement.contains("/"),
              !entitlement.unicodeScalars.contains(where: IngestStage.isControl) else {
            throw ProductCatalogueError(.invalidEntitlement,
                                        "product \"\(id)\": entitlement must be 1-128 characters without / or control characters")
        }
        switch (product.type, product.durationMonths) {
        case (.nonRenewing, nil):
            throw ProductCatalogueError(.invalidDuration, "product \"\(id)\": nonRenewing products need durationMonths")
        case (.nonRenewing, let months?) where !(1...120).contains(months):
            throw ProductCatalogueError(.invalidDuration, "product \"\(id)\": durationMonths must be 1-120, got \(months)")
        case (let type, _?) where type != .nonRenewing:
            throw ProductCatalogueError(.invalidDuration,
                                        "product \"\(id)\": durationMonths only applies to nonRenewing, not \(type.rawValue)")
        default:
            break
        }
        try validateGroup(product)
        if let units = product.unitsPerPurchase {
            guard product.type == .consumable else {
                throw ProductCatalogueError(.invalidUnits,
                                            "product \"\(id)\": unitsPerPurchase only applies to consumable, not \(product.type.rawValue)")
            }
            guard (1...1_000_000).contains(units) else {
                throw ProductCatalogueError(.invalidUnits, "product \"\(id)\": unitsPerPurchase must be 1-1000000, got \(units)")
            }
        }
    }

    private static func validateGroup(_ product: CatalogueProduct) throws {
        let id = product.productId
        guard product.type == .autoRenewable else {
            if product.subscriptionGroup != nil {
                throw ProductCatalogueError(.invalidSubscriptionGroup,
                                            "product \"\(id)\": subscriptionGroup only applies to autoRenewable, not \(product.type.rawValue)")
            }
            if product.level != nil {
                throw ProductCatalogueError(.invalidLevel, "product \"\(id)\": level only applies to autoRenewable, not \(product.type.rawValue)")
            }
            return
        }
        guard let group = product.subscriptionGroup, !group.isEmpty, group.count <= 128,
              !group.unicodeScalars.contains(where: IngestStage.isControl) else {
            throw ProductCatalogueError(.invalidSubscriptionGroup,
                                        "product \"\(id)\": autoRenewable products need subscriptionGroup (1-128 characters)")
        }
        guard let level = product.level, (1...1000).contains(level) else {
            throw ProductCatalogueError(.invalidLevel, "product \"\(id)\": autoRenewable products need level 1-1000 "
                + "(1 is the highest service), got \(product.level.map(String.init) ?? "none")")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "top level" : codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context.codingPath)) is invalid"
        @unknown default:
            return "not a product catalogue"
        }
    }

    private struct CatalogueFile: Decodable {
        var schema: String?
        var products: [String: Entry]
    }

    private struct Entry: Decodable {
        var type: String
        var entitlement: String?
        var durationMonths: Int?
        var unitsPerPurchase: Int?
        var subscriptionGroup: String?
        var level: Int?
    }
}
