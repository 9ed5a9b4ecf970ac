import Foundation

/// The contracts' JSON encoder: compact, keys sorted, slashes not escaped; the bytes Foundation's
/// `JSONEncoder` writes with `[.sortedKeys, .withoutEscapingSlashes]` (ContractEncoderTests holds
/// it to that), at a fraction of the cost: values go into a small tree of enum nodes and are
/// written once into one byte buffer, where Foundation builds, sorts and serialises through
/// generic boxes and `String` comparisons.
///
/// A non-finite double throws, as there.
struct ContractJSONEncoder {
    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = NodeEncoder(codingPath: [])
        try value.encode(to: root)
        var writer = ContractJSONWriter(capacity: 1024)
        root.node.write(to: &writer)
        return writer.bytes
    }
}

/// A value being encoded. Containers are reference boxes so that a container handed out by the
/// `Encoder` API can still be filled after its parent recorded it.
private enum Node {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case float(Float)
    case string(String)
    case object(ObjectBox)
    case array(ArrayBox)
    /// A single-value container not written to (Foundation writes `{}` for an empty encode).
    case empty

    /// Writes through ``ContractJSONWriter``, so escaping and number formatting have one
    /// implementation for this path and the direct one.
    func write(to writer: inout ContractJSONWriter) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.value(value)
        case .int(let value): writer.value(value)
        case .uint(let value): writer.value(value)
        case .double(let value): writer.value(value)
        case .float(let value): writer.value(value)
        case .string(let value): writer.value(value)
        case .object(let box): box.write(to: &writer)
        case .array(let box): box.write(to: &writer)
        case .empty:
            writer.beginObject()
            writer.endObject()
        }
    }
}

private final class ObjectBox {
    /// Members in the order encoded; a key encoded twice keeps its last value (as Foundation).
    var members: [(key: String, value: Node)] = []

    func set(_ value: Node, for key: String) {
        members.append((key, value))
    }

    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        let order = members.indices.sorted { members[$0].key < members[$1].key || (members[$0].key == members[$1].key && $0 < $1) }
        for (position, index) in order.enumerated() {
            if position + 1 < order.count, members[order[position + 1]].key == members[index].key { continue }
            writer.key(members[index].key)
            members[index].value.write(to: &writer)
        }
        writer.endObject()
    }
}

private final class ArrayBox {
    var items: [Node] = []

    func write(to writer: inout ContractJSONWriter) {
        writer.beginArray()
        for item in items { item.write(to: &writer) }
        writer.endArray()
    }
}

/// The `Encoder` for one value: it becomes an object, an array or a single value.
private final class NodeEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: Node = .empty

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: ObjectBox
        if case .object(let existing) = node {
            box = existing
        } else {
            box = ObjectBox()
            node = .object(box)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .array(let existing) = node {
            box = existing
        } else {
            box = ArrayBox()
            node = .array(box)
        }
        return UnkeyedContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(encoder: self) }

    /// Encodes a nested value into a node (scalars directly, anything else through an encoder).
    ///
    /// Scalars are recognised by comparing metatypes, not by casting: a dynamic cast per value
    /// (`as? String`, `as? any FixedWidthInteger`) was the encoder's largest cost in a profile. The
    /// coding path (`parent` + `key`) is only built for a nested encoder or an error.
    static func node<T: Encodable>(for value: T, parent: [any CodingKey], key: (any CodingKey)?) throws -> Node {
        func path() -> [any CodingKey] { key.map { parent + [$0] } ?? parent }
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .int(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Int64.self { return .int(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return try checked(unsafeBitCast(value, to: Double.self), at: path()) }
        if T.self == Int32.self { return .int(Int64(unsafeBitCast(value, to: Int32.self))) }
        if T.self == UInt64.self { return .uint(unsafeBitCast(value, to: UInt64.self)) }
        if T.self == Float.self {
            let float = unsafeBitCast(value, to: Float.self)
            _ = try checked(Double(float), at: path())
            return .float(float)
        }
        if T.self == Int8.self || T.self == Int16.self || T.self == UInt.self || T.self == UInt8.self
            || T.self == UInt16.self || T.self == UInt32.self, let integer = value as? any FixedWidthInteger {
            if let signed = Int64(exactly: integer) { return .int(signed) }
            return .uint(UInt64(integer))
        }
        // Types whose JSONEncoder form differs from their own `encode(to:)`:
        if T.self == Data.self { return .string(unsafeBitCast(value, to: Data.self).base64EncodedString()) }
        if T.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
        if T.self == Decimal.self, let decimal = value as? Decimal { return .double(NSDecimalNumber(decimal: decimal).doubleValue) }
        let encoder = NodeEncoder(codingPath: path())
        try value.encode(to: encoder)
        return encoder.node
    }

    static func checked(_ value: Double, at codingPath: [any CodingKey]) throws -> Node {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "non-finite double"))
        }
        return .double(value)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: ObjectBox
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { box.set(.null, for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { box.set(.bool(value), for: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { box.set(.string(value), for: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        box.set(try NodeEncoder.checked(value, at: codingPath + [key]), for: key.stringValue)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        box.set(try NodeEncoder.node(for: value, parent: codingPath, key: key), for: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { box.set(.int(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { box.set(.int(value), for: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { box.set(.uint(UInt64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { box.set(.uint(UInt64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { box.set(.uint(UInt64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { box.set(.uint(UInt64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { box.set(.uint(value), for: key.stringValue) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        box.set(try NodeEncoder.node(for: value, parent: codingPath, key: key), for: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        box.set(.object(nested), for: key.stringValue)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        box.set(.array(nested), for: key.stringValue)
        return UnkeyedContainer(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { SuperEncoder(box: box, key: "super", codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SuperEncoder(box: box, key: key.stringValue, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let box: ArrayBox
    let codingPath: [any CodingKey]
    var count: Int { box.items.count }

    mutating func encodeNil() throws { box.items.append(.null) }
    mutating func encode(_ value: Bool) throws { box.items.append(.bool(value)) }
    mutating func encode(_ value: String) throws { box.items.append(.string(value)) }
    mutating func encode(_ value: Double) throws { box.items.append(try NodeEncoder.checked(value, at: codingPath)) }
    mutating func encode(_ value: Int) throws { box.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { box.items.append(.int(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        box.items.append(try NodeEncoder.node(for: value, parent: codingPath, key: nil))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        box.items.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        box.items.append(.array(nested))
        return UnkeyedContainer(box: nested, codingPath: codingPath)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = NodeEncoder(codingPath: codingPath)
        let index = box.items.count
        box.items.append(.empty)
        return DeferredEncoder(encoder: encoder) { [box] node in box.items[index] = node }
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.node = .null }
    mutating func encode(_ value: Bool) throws { encoder.node = .bool(value) }
    mutating func encode(_ value: String) throws { encoder.node = .string(value) }
    mutating func encode(_ value: Double) throws { encoder.node = try NodeEncoder.checked(value, at: codingPath) }
    mutating func encode(_ value: Int) throws { encoder.node = .int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { encoder.node = .int(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.node = try NodeEncoder.node(for: value, parent: codingPath, key: nil)
    }
}

/// `superEncoder(forKey:)`: an encoder whose result lands under `key` of the parent object.
private final class SuperEncoder: Encoder {
    let inner: NodeEncoder
    let box: ObjectBox
    let key: String
    var codingPath: [any CodingKey] { inner.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(box: ObjectBox, key: String, codingPath: [any CodingKey]) {
        inner = NodeEncoder(codingPath: codingPath)
        self.box = box
        self.key = key
    }

    deinit { box.set(inner.node, for: key) }

    func container<K: CodingKey>(keyedBy type: K.Type) -> KeyedEncodingContainer<K> { inner.container(keyedBy: type) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { inner.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { inner.singleValueContainer() }
}

/// An unkeyed container's super encoder: its result replaces a placeholder when released.
private final class DeferredEncoder: Encoder {
    let encoder: NodeEncoder
    let finish: (Node) -> Void
    var codingPath: [any CodingKey] { encoder.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(encoder: NodeEncoder, finish: @escaping (Node) -> Void) {
        self.encoder = encoder
        self.finish = finish
    }

    deinit { finish(encoder.node) }

    func container<K: CodingKey>(keyedBy type: K.Type) -> KeyedEncodingContainer<K> { encoder.container(keyedBy: type) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { encoder.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { encoder.singleValueContainer() }
}
