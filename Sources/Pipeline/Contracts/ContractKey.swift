/// A member name in a ``ContractReader`` coding path: the `CodingKey` the Codable path would
/// report, by name (the runner and the tests read coding paths by `stringValue` only).
struct ContractKey: CodingKey, ExpressibleByStringLiteral, Sendable {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { stringValue = value }
}
