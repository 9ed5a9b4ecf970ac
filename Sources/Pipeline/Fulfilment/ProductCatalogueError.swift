/// Why a product catalogue could not be loaded: an opaque code for programs and a precise
/// message for people (which product, which field, what was found).
public struct ProductCatalogueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The file could not be read.
        public static let unreadableFile = Code("unreadableFile")
        /// Not JSON, or not the catalogue's shape.
        public static let invalidJSON = Code("invalidJSON")
        /// `schema` names another format.
        public static let unsupportedSchema = Code("unsupportedSchema")
        /// No products at all.
        public static let emptyCatalogue = Code("emptyCatalogue")
        /// A product id is empty, too long or uses characters Apple does not allow.
        public static let invalidProductId = Code("invalidProductId")
        /// The same product id appears twice.
        public static let duplicateProduct = Code("duplicateProduct")
        /// `type` is not one of the four product types.
        public static let unknownProductType = Code("unknownProductType")
        /// `entitlement` is missing, empty, too long or has control characters.
        public static let invalidEntitlement = Code("invalidEntitlement")
        /// `durationMonths` missing on a non-renewing product, out of range, or on another type.
        public static let invalidDuration = Code("invalidDuration")
        /// `unitsPerPurchase` out of range or on a non-consumable type.
        public static let invalidUnits = Code("invalidUnits")
        /// An auto-renewable product without a subscription group, or another product with one.
        public static let invalidSubscriptionGroup = Code("invalidSubscriptionGroup")
        /// An auto-renewable product without a level (1 is the highest service), or another product with one.
        public static let invalidLevel = Code("invalidLevel")
    }

    /// The class of problem, for programs.
    public var code: Code
    /// What is wrong and where, for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "product catalogue: \(message)" }
}
