import Observability

/// A JSON object whose member names are unique (the parser rejects duplicates), in document order.
///
/// Members live in one array with a 64-bit tag of each name (its length and outer bytes), so a
/// lookup compares integers and confirms one name, where a dictionary would hash every name on
/// insertion and again on each lookup, and allocate a table per object: the contracts and Apple's
/// payloads are objects of a few dozen members read once. An object past ``indexThreshold``
/// members also keeps a dictionary of positions, so neither duplicate checks nor lookups grow
/// with the square of a hostile object's size.
public struct JSONObject: Sendable, Equatable {
    struct Member: Sendable {
        let tag: UInt64
        let name: String
        let value: JSONValue
    }

    /// Members beyond which names are also indexed by a dictionary.
    static let indexThreshold = 24

    private(set) var storage: [Member] = []
    private var index: [String: Int]?

    /// An object of `members` (their order is the dictionary's).
    public init(members: [String: JSONValue] = [:]) {
        storage.reserveCapacity(members.count)
        for (name, value) in members { _ = insertUnique(name, value) }
    }

    /// An empty object with room for `capacity` members (the parser).
    init(capacity: Int) {
        storage.reserveCapacity(capacity)
    }

    /// Appends a member unless its name is taken. - Returns: false for a duplicate name.
    mutating func insertUnique(_ name: String, _ value: JSONValue) -> Bool {
        let tag = Self.tag(of: name)
        if index != nil {
            guard index![name] == nil else { return false }
            index![name] = storage.count
        } else {
            for member in storage where member.tag == tag && member.name == name { return false }
            if storage.count == Self.indexThreshold {
                var positions = Dictionary<String, Int>(minimumCapacity: storage.count * 2)
                for (position, member) in storage.enumerated() { positions[member.name] = position }
                positions[name] = storage.count
                index = positions
            }
        }
        storage.append(Member(tag: tag, name: name, value: value))
        return true
    }

    /// The member value, or `nil` when absent.
    public subscript(key: String) -> JSONValue? {
        if let index { return index[key].map { storage[$0].value } }
        let tag = Self.tag(of: key)
        for member in storage where member.tag == tag && member.name == key { return member.value }
        return nil
    }

    /// Member names in document order.
    public var keys: [String] { storage.map(\.name) }

    /// The members as a dictionary (for callers that edit an object; lookups use the subscript).
    public var members: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: storage.map { ($0.name, $0.value) })
    }

    /// The number of members.
    public var count: Int { storage.count }

    /// Equal members, whatever their order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.storage.allSatisfy { rhs[$0.name] == $0.value }
    }

    /// The name's length with its first and last eight UTF-8 bytes: member names of one object
    /// rarely agree on all three, and agreeing costs only a confirming comparison.
    @inline(__always)
    static func tag(of name: String) -> UInt64 {
        name.withUTF8InPlace { tag(ofUTF8: $0) }
    }

    /// ``tag(of:)`` of a name's UTF-8 bytes (``JSONTape`` compares names in place).
    @inline(__always)
    static func tag(ofUTF8 bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var head: UInt64 = 0, tail: UInt64 = 0
        if count >= 8 {
            head = raw.loadUnaligned(as: UInt64.self)
            tail = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else {
            for offset in 0..<count { head |= UInt64(base[offset]) << (8 * UInt64(offset)) }
        }
        return (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(count)
    }
}
