import AppStore
import Foundation

/// Typed access to one parsed contract object for ``ContractReadable`` conformances, with the
/// semantics of ``ContractJSONDecoder``'s keyed container and the contracts' timestamp helpers:
/// an absent required member is `keyNotFound`, `null` is `valueNotFound`, a wrong JSON type is
/// `typeMismatch`, a value that does not fit (number range, timestamp, enum raw value, schema) is
/// `dataCorrupted`; `…IfPresent` reads treat absent and `null` alike; unknown members are ignored.
///
/// Coding paths (and their arrays) are built only when an error is thrown or an object nests, so
/// a well-formed record reads without allocating beyond its own values. Over a ``JSONTape`` a
/// member is found in the document's bytes, only the values read become values, and timestamps
/// are parsed from the bytes without a `String`.
struct ContractReader {
    /// Where the object's members are: on a tape (the fast path, ``JSONTape``) or a parsed tree.
    private let source: JSONMembers
    let codingPath: [any CodingKey]

    /// Opens `value` as an object, as `Decoder.container(keyedBy:)` does.
    init(_ value: JSONValue, codingPath: [any CodingKey]) throws {
        guard case .object(let object) = value else { throw Self.mismatch([String: Any].self, value, codingPath) }
        self.source = .tree(object)
        self.codingPath = codingPath
    }

    /// Reads an object's members, wherever the document was read.
    init(_ members: JSONMembers, codingPath: [any CodingKey]) {
        self.source = members
        self.codingPath = codingPath
    }

    /// Opens the tape's value at `position` as an object.
    init(_ tape: JSONTape, at position: Int, codingPath: [any CodingKey]) throws {
        guard tape.isObject(at: position) else { throw Self.mismatch([String: Any].self, tape.value(at: position), codingPath) }
        self.source = .tape(tape, object: position)
        self.codingPath = codingPath
    }

    // MARK: Errors, in ContractJSONDecoder's wording (the type and integer errors are shared with it).

    /// `valueNotFound` for `null`, `typeMismatch` otherwise: the wording of every type error of the
    /// contracts' decoding (``ContractJSONDecoder`` uses it too).
    static func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
        if case .null = value {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "expected \(type), found null"))
        }
        return .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type), found \(value.typeName)"))
    }

    private func missing(_ key: ContractKey) -> DecodingError {
        .keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
    }

    private func corrupted(_ key: ContractKey, _ detail: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: detail))
    }

    private func mismatch(_ type: Any.Type, _ value: JSONValue, _ key: ContractKey) -> DecodingError {
        Self.mismatch(type, value, codingPath + [key])
    }

    @inline(__always)
    private func member(_ key: ContractKey) throws -> JSONValue {
        guard let value = lookup(key) else { throw missing(key) }
        return value
    }

    /// The member value, or nil when absent.
    @inline(__always)
    private func lookup(_ key: ContractKey) -> JSONValue? { source[key.stringValue] }

    /// The member value, or nil when absent or `null` (the standard `decodeIfPresent`).
    @inline(__always)
    private func presentMember(_ key: ContractKey) -> JSONValue? {
        switch lookup(key) {
        case .none, .some(.null): nil
        case .some(let value): value
        }
    }

    // MARK: Scalars

    func string(_ key: ContractKey) throws -> String {
        let value = try member(key)
        guard case .string(let string) = value else { throw mismatch(String.self, value, key) }
        return string
    }

    /// A required string kept as the document's bytes when it is plain ASCII on a tape (see
    /// ``RecordText``), else read as ``string(_:)`` reads it.
    func text(_ key: ContractKey) throws -> RecordText {
        if case .tape(let tape, let object) = source, let position = tape.member(key.stringValue, ofObjectAt: object),
           let bytes = tape.asciiBytes(ofStringAt: position) {
            return RecordText(ascii: bytes)
        }
        return RecordText(try string(key))
    }

    func stringIfPresent(_ key: ContractKey) throws -> String? {
        guard let value = presentMember(key) else { return nil }
        guard case .string(let string) = value else { throw mismatch(String.self, value, key) }
        return string
    }

    func bool(_ key: ContractKey) throws -> Bool {
        let value = try member(key)
        guard case .bool(let bool) = value else { throw mismatch(Bool.self, value, key) }
        return bool
    }

    func boolIfPresent(_ key: ContractKey) throws -> Bool? {
        guard let value = presentMember(key) else { return nil }
        guard case .bool(let bool) = value else { throw mismatch(Bool.self, value, key) }
        return bool
    }

    func int(_ key: ContractKey) throws -> Int {
        try integer(try member(key), key)
    }

    func intIfPresent(_ key: ContractKey) throws -> Int? {
        guard let value = presentMember(key) else { return nil }
        return try integer(value, key)
    }

    private func integer(_ value: JSONValue, _ key: ContractKey) throws -> Int {
        try Self.exactInteger(value, Int.self, at: codingPath + [key])
    }

    /// An exact integer: a JSON integer, or a number with an integral value, in `type`'s range;
    /// `typeMismatch`/`valueNotFound` for anything else, `dataCorrupted` when it does not fit.
    /// The one rule for ``ContractJSONDecoder`` and the direct readers. The path is only used on
    /// error (an autoclosure, so a well-formed value builds none).
    static func exactInteger<I: FixedWidthInteger>(_ value: JSONValue, _ type: I.Type,
                                                   at path: @autoclosure () -> [any CodingKey]) throws -> I {
        switch value {
        case .integer(let integer):
            if let exact = I(exactly: integer) { return exact }
        case .number(let number):
            if let exact = I(exactly: number) { return exact }
        default:
            throw mismatch(type, value, path())
        }
        throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "number does not fit in \(type)"))
    }

    // MARK: Contract vocabulary

    /// The `schema` member, which must equal `expected` (every versioned contract checks it first).
    func schema(_ expected: String) throws -> String {
        // On a tape the bytes are compared where they are and the constant is returned: the
        // schema names are longer than a small string, so reading one would allocate per record.
        if case .tape(let tape, let object) = source, let position = tape.member("schema", ofObjectAt: object),
           tape.withUTF8(ofStringAt: position, { expected.utf8.elementsEqual($0) }) == true {
            return expected
        }
        let schema = try string("schema")
        guard schema == expected else { throw corrupted("schema", "expected \(expected)") }
        return schema
    }

    /// A required contract timestamp (`decodeTimestamp(forKey:)`).
    func timestamp(_ key: ContractKey) throws -> Date {
        if case .tape(let tape, let object) = source {
            guard let position = tape.member(key.stringValue, ofObjectAt: object) else { throw missing(key) }
            return try date(at: position, in: tape, key)
        }
        return try date(try string(key), key)
    }

    /// An optional contract timestamp (`decodeTimestampIfPresent(forKey:)`).
    func timestampIfPresent(_ key: ContractKey) throws -> Date? {
        if case .tape(let tape, let object) = source {
            guard let position = tape.member(key.stringValue, ofObjectAt: object), !tape.isNull(at: position) else { return nil }
            return try date(at: position, in: tape, key)
        }
        guard let text = try stringIfPresent(key) else { return nil }
        return try date(text, key)
    }

    /// The timestamp at a tape position, parsed from the document's bytes (no `String` built).
    private func date(at position: Int, in tape: JSONTape, _ key: ContractKey) throws -> Date {
        guard let parsed = tape.withUTF8(ofStringAt: position, ContractCoding.date(fromUTF8:)) else {
            throw mismatch(String.self, tape.value(at: position), key)
        }
        return try date(parsed, key)
    }

    private func date(_ text: String, _ key: ContractKey) throws -> Date {
        try date(ContractCoding.date(from: text), key)
    }

    /// The parsed instant, or the error of a string that is not a contract timestamp.
    private func date(_ date: Date?, _ key: ContractKey) throws -> Date {
        guard let date else { throw corrupted(key, "not an RFC 3339 timestamp") }
        return date
    }

    /// A string-backed enumeration, as its synthesized `init(from:)` reads it.
    func rawValue<Value: RawRepresentable>(_ type: Value.Type, _ key: ContractKey) throws -> Value
    where Value.RawValue == String {
        let raw = try string(key)
        guard let value = Value(rawValue: raw) else {
            throw corrupted(key, "Cannot initialize \(Value.self) from invalid \(String.self) value \(raw)")
        }
        return value
    }

    /// A required nested contract object.
    func nested<Value: ContractReadable>(_ type: Value.Type, _ key: ContractKey) throws -> Value {
        if case .tape(let tape, let object) = source {
            guard let position = tape.member(key.stringValue, ofObjectAt: object) else { throw missing(key) }
            return try Value(reading: ContractReader(tape, at: position, codingPath: codingPath + [key]))
        }
        return try Value.read(try member(key), codingPath: codingPath + [key])
    }

    /// An optional nested contract object (absent or `null` gives nil).
    func nestedIfPresent<Value: ContractReadable>(_ type: Value.Type, _ key: ContractKey) throws -> Value? {
        if case .tape(let tape, let object) = source {
            guard let position = tape.member(key.stringValue, ofObjectAt: object), !tape.isNull(at: position) else { return nil }
            return try Value(reading: ContractReader(tape, at: position, codingPath: codingPath + [key]))
        }
        guard let value = presentMember(key) else { return nil }
        return try Value.read(value, codingPath: codingPath + [key])
    }
}
