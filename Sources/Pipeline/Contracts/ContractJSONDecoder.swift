import AppStore
import Foundation

/// The contracts' JSON decoder: the strict parser every receiptd input goes through
/// (``JSONParser``: duplicate members, depth and trailing data refused) under a small `Decoder`,
/// where Foundation's `JSONDecoder` was the largest single cost of the stages after encoding.
/// Decodes what Foundation decodes for the contracts (ContractDecoderTests holds it to that) and
/// throws `DecodingError` for everything else; one difference no contract meets: an integer
/// beyond `Int64` (the parser's exact range) is refused.
struct ContractJSONDecoder {
    /// Deeper than any contract (an owner's state holds purchases holding a notification).
    static let maxDepth = 32

    /// Decodes through the type's Codable conformance (the reference for ``ContractReadable``).
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try ValueDecoder(try parse(bytes), codingPath: []).decode(type)
    }

    /// Reads through the type's ``ContractReadable`` conformance, no containers, over the
    /// document's ``JSONMembers`` (a tape, or the parsed tree where the tape leaves the bytes to
    /// the parser, which then also gives the error of a document that is not JSON).
    static func read<T: ContractReadable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let read: Result<JSONMembers, JSONMembers.NotAnObject>
        do {
            read = try JSONMembers.read(bytes, maxDepth: maxDepth)
        } catch {
            throw notJSON(error)
        }
        switch read {
        case .success(let members): return try T(reading: ContractReader(members, codingPath: []))
        case .failure(let other): throw ContractReader.mismatch([String: Any].self, other.value, [])
        }
    }

    /// Parses the document; anything but strict JSON is `dataCorrupted` at the root.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try JSONParser.parse(bytes, maxDepth: maxDepth)
        } catch {
            throw notJSON(error)
        }
    }

    private static func notJSON(_ error: VerificationError) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON: \(error.detail)"))
    }
}

/// Decodes one JSON value.
private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSONValue, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([Any].self) }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(decoder: self) }

    func mismatch(_ type: Any.Type) -> DecodingError {
        ContractReader.mismatch(type, value, codingPath)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is String.Type: return try string() as! T
        case is Bool.Type: return try bool() as! T
        case is Int.Type: return try integer(Int.self) as! T
        case is Int64.Type: return try integer(Int64.self) as! T
        case is Int32.Type: return try integer(Int32.self) as! T
        case is Double.Type: return try double() as! T
        case is Float.Type: return Float(try double()) as! T
        case let integerType as any FixedWidthInteger.Type: return try integer(integerType) as! T
        // Types whose JSONDecoder form differs from their own `init(from:)`:
        case is Data.Type:
            guard let data = Data(base64Encoded: try string()) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "not base64"))
            }
            return data as! T
        case is URL.Type:
            guard let url = URL(string: try string()) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "not a URL"))
            }
            return url as! T
        default: return try T(from: self)
        }
    }

    func string() throws -> String {
        guard case .string(let string) = value else { throw mismatch(String.self) }
        return string
    }

    func bool() throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(Bool.self) }
        return bool
    }

    func double() throws -> Double {
        switch value {
        case .number(let number): return number
        case .integer(let integer): return Double(integer)
        default: throw mismatch(Double.self)
        }
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        try ContractReader.exactInteger(value, type, at: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> ValueDecoder {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
        }
        return ValueDecoder(value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try member(key).value { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try member(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try member(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try member(key).double() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try member(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try member(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try member(key).integer(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type,
                                               forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try member(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try member(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { ValueDecoder(object["super"] ?? .null, codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(object[key.stringValue] ?? .null, codingPath: codingPath + [key]) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private struct Index: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(intValue!)" }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    private mutating func next(_ type: Any.Type) throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [Index(currentIndex)],
                                                          debugDescription: "unkeyed container is at its end"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(elements[currentIndex], codingPath: codingPath + [Index(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: String.Type) throws -> String { try next(type).string() }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).bool() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).double() }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: Any].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next([Any].self).unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        if case .null = decoder.value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
}
