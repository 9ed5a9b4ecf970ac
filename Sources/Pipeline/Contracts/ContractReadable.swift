import AppStore

/// A contract that reads itself straight from the parsed JSON (``ContractReader``), skipping the
/// `Decoder` containers: the stages' hot inputs (verify's, fulfil's, the owners stage's), where
/// the container boxes and per-member coding paths cost more than the parse itself.
///
/// - Important: A conformance mirrors the type's `init(from:)` exactly: same members in the same
///   order, same validation after reading, so it accepts and refuses the same documents with the
///   same `DecodingError` (case and coding path; the runner's dead-letter message is built from
///   them). The Codable conformance stays the reference; ContractReadingTests hold the two equal.
protocol ContractReadable {
    /// Reads the contract from one JSON object.
    /// - Throws: `DecodingError`, as the type's `init(from:)` would throw it.
    init(reading reader: ContractReader) throws
}

extension ContractReadable {
    /// Reads `value` as the `Decoder`'s `container(keyedBy:)` + `init(from:)` would.
    static func read(_ value: JSONValue, codingPath: [any CodingKey]) throws -> Self {
        try Self(reading: ContractReader(value, codingPath: codingPath))
    }
}
