import Observability

/// A JSON document checked by ``JSONParser``'s rules and kept as a flat list of entries that point
/// into its bytes, for a reader that wants some typed members of a small document: no tree of
/// values, no `String` for member names or plain ASCII values until one is asked for.
///
/// The tape accepts only what ``JSONParser/parse(_:maxDepth:)`` accepts (the same scanning code
/// checks strings, numbers and literals), and leaves some valid documents to the parser:
/// ``init(_:maxDepth:)`` is nil for a member name with an escape or a non-ASCII byte (Swift
/// compares such names by canonical equivalence, not by bytes) and for an object of more than
/// ``JSONObject/indexThreshold`` members. A caller that gets nil parses the bytes instead, which
/// either gives the tree or throws the parser's error.
public struct JSONTape: Sendable {
    struct Entry: Sendable {
        /// object: where its members start in `members`; name: its tag; integer: its `Int64`
        /// bits; number: its `Double` bits; other kinds: 0.
        var bits: UInt64
        /// object, array: the position after the container's last entry; name, ASCII string:
        /// the first byte; decoded string: its index in `strings`.
        var first: Int32
        /// object, array: member or element count; name, ASCII string: the byte after the last.
        var second: Int32
        var kind: Kind
    }

    enum Kind: UInt8, Sendable {
        case object, array, name, asciiString, decodedString, integer, number, `true`, `false`, null
    }

    /// An object's member: its name's tag and the position of its name (its value follows).
    struct Member: Sendable {
        var tag: UInt64
        var name: Int
    }

    private let bytes: [UInt8]
    private let entries: [Entry]
    /// Each object's members side by side, so a lookup compares tags in one run of memory
    /// rather than stepping over the values between names.
    private let members: [Member]
    /// Strings that had escapes or non-ASCII bytes, decoded while scanning.
    private let strings: [String]

    /// The tape of a document, or nil when the parser must decide (see the type's description).
    /// - Parameter maxMembers: the most members an object may have on the tape (nil:
    ///   ``JSONObject/indexThreshold``). A tape finds a duplicate name by comparing it with the
    ///   object's earlier names (n²/2 comparisons for n members) where the parser indexes a large
    ///   object; a reader of a known larger document (the harness's tally of entitlement changes,
    ///   about 30 members) may raise it.
    public init?(_ bytes: [UInt8], maxDepth: Int, maxMembers: Int? = nil) {
        guard bytes.count < Int(Int32.max) else { return nil }
        var builder = JSONParser.TapeBuilder()
        let accepted = bytes.withUnsafeBufferPointer { buffer -> Bool in
            var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
            if let maxMembers { parser.maxTapeMembers = maxMembers }
            do {
                parser.skipWhitespace()
                try parser.tapeValue(depth: 0, &builder)
                parser.skipWhitespace()
                return parser.index == buffer.count
            } catch {
                return false
            }
        }
        guard accepted else { return nil }
        self.bytes = bytes
        entries = builder.entries
        members = builder.members
        strings = builder.strings
    }

    /// The position of the document's value.
    public var root: Int { 0 }

    public func isObject(at position: Int) -> Bool { entries[position].kind == .object }

    public func isNull(at position: Int) -> Bool { entries[position].kind == .null }

    /// The position of the value of the member `name` of the object at `object`, or nil.
    public func member(_ name: String, ofObjectAt object: Int) -> Int? {
        let header = entries[object]
        guard header.kind == .object else { return nil }
        return name.withUTF8InPlace { member($0, of: header) }
    }

    /// The lookup over buffers: contracts look up a dozen members per record, and a copy of the
    /// name or a slice of `members` retained their storage on every one.
    private func member(_ key: UnsafeBufferPointer<UInt8>, of header: Entry) -> Int? {
        let tag = JSONObject.tag(ofUTF8: key)
        return bytes.withUnsafeBufferPointer { document -> Int? in
            members.withUnsafeBufferPointer { members -> Int? in
                let first = Int(header.bits)
                for member in members[first..<(first + Int(header.second))] where member.tag == tag {
                    let name = entries[member.name]
                    if Self.equal(UnsafeBufferPointer(rebasing: document[Int(name.first)..<Int(name.second)]), key) {
                        return member.name + 1
                    }
                }
                return nil
            }
        }
    }

    /// The value at `position` as the parser would have built it.
    public func value(at position: Int) -> JSONValue {
        let entry = entries[position]
        switch entry.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .integer: return .integer(Int64(bitPattern: entry.bits))
        case .number: return .number(Double(bitPattern: entry.bits))
        case .asciiString, .name:
            return .string(bytes.withUnsafeBufferPointer {
                String(decoding: UnsafeBufferPointer(rebasing: $0[Int(entry.first)..<Int(entry.second)]), as: UTF8.self)
            })
        case .decodedString: return .string(strings[Int(entry.first)])
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(entry.second))
            var element = position + 1
            for _ in 0..<entry.second {
                elements.append(value(at: element))
                element = next(after: element)
            }
            return .array(elements)
        case .object:
            var object = JSONObject(capacity: Int(entry.second))
            var member = position + 1
            for _ in 0..<entry.second {
                guard case .string(let name) = value(at: member) else { break }
                _ = object.insertUnique(name, value(at: member + 1))
                member = next(after: member + 1)
            }
            return .object(object)
        }
    }

    /// `body` over the UTF-8 of the string at `position` (nil when it is not a string): a reader
    /// that converts the text (a timestamp) needs no `String` of it.
    public func withUTF8<R>(ofStringAt position: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        let entry = entries[position]
        switch entry.kind {
        case .asciiString:
            return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[Int(entry.first)..<Int(entry.second)])) }
        case .decodedString:
            return strings[Int(entry.first)].withUTF8InPlace(body)
        default:
            return nil
        }
    }

    /// The document's bytes of the plain ASCII string at `position` (no escapes, so they are its
    /// text), sharing the document's storage; nil for any other value. A reader that keeps a long
    /// string only to read its bytes (verify's JWS) copies nothing.
    public func asciiBytes(ofStringAt position: Int) -> ArraySlice<UInt8>? {
        let entry = entries[position]
        guard entry.kind == .asciiString else { return nil }
        return bytes[Int(entry.first)..<Int(entry.second)]
    }

    /// Whether two names have the same bytes (names are short: a byte loop is enough).
    @inline(__always)
    static func equal(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for offset in 0..<lhs.count where lhs[offset] != rhs[offset] { return false }
        return true
    }

    /// The position after the value at `position` (and after all of a container's entries).
    @inline(__always)
    private func next(after position: Int) -> Int { Self.position(after: position, in: entries) }

    @inline(__always)
    static func position(after position: Int, in entries: [Entry]) -> Int {
        switch entries[position].kind {
        case .object, .array: Int(entries[position].first)
        default: position + 1
        }
    }
}

extension JSONParser {
    /// A tape being recorded.
    struct TapeBuilder {
        var entries: [JSONTape.Entry] = []
        var strings: [String] = []
        var members: [JSONTape.Member] = []

        init() {
            entries.reserveCapacity(48)
            members.reserveCapacity(32)
        }

        /// Whether the object whose header is at `header`, with `count` members so far, has a
        /// member named by the bytes `name` (with `tag`).
        func hasMember(_ name: UnsafeBufferPointer<UInt8>, tag: UInt64, ofObjectAt header: Int, count: Int,
                       in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var position = header + 1
            for _ in 0..<count {
                let entry = entries[position]
                if entry.bits == tag,
                   JSONTape.equal(UnsafeBufferPointer(rebasing: bytes[Int(entry.first)..<Int(entry.second)]), name) {
                    return true
                }
                position = JSONTape.position(after: position + 1, in: entries)
            }
            return false
        }

        /// Lists the members of the complete object at `header` in `members`, and records where.
        mutating func listMembers(ofObjectAt header: Int, count: Int) {
            entries[header].bits = UInt64(members.count)
            var position = header + 1
            for _ in 0..<count {
                members.append(JSONTape.Member(tag: entries[position].bits, name: position))
                position = JSONTape.position(after: position + 1, in: entries)
            }
        }

        mutating func append(_ kind: JSONTape.Kind, bits: UInt64 = 0, first: Int = 0, second: Int = 0) {
            entries.append(JSONTape.Entry(bits: bits, first: Int32(truncatingIfNeeded: first),
                                          second: Int32(truncatingIfNeeded: second), kind: kind))
        }
    }

    /// What the tape leaves to the parser (the error is not shown: the caller parses instead).
    private var leftToParser: VerificationError { VerificationError(.invalidJSON, "left to the parser at byte \(index)") }

    /// Records the value at `index`, checking it as ``parseValue(depth:)`` does.
    mutating func tapeValue(depth: Int, _ tape: inout TapeBuilder) throws(VerificationError) {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw VerificationError(.jsonTooDeep, "nesting deeper than \(maxDepth)") }
            try tapeObject(depth: depth + 1, &tape)
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw VerificationError(.jsonTooDeep, "nesting deeper than \(maxDepth)") }
            try tapeArray(depth: depth + 1, &tape)
        case UInt8(ascii: "\""):
            switch try scanString() {
            case .ascii(let range):
                tape.append(.asciiString, first: range.lowerBound, second: range.upperBound)
            case .decoded(let string):
                tape.append(.decodedString, first: tape.strings.count)
                tape.strings.append(string)
            }
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            tape.append(.true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            tape.append(.false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            tape.append(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            switch try parseNumber() {
            case .integer(let integer): tape.append(.integer, bits: UInt64(bitPattern: integer))
            case .number(let number): tape.append(.number, bits: number.bitPattern)
            default: throw failure("invalid number")
            }
        default:
            throw failure("unexpected character")
        }
    }

    private mutating func tapeObject(depth: Int, _ tape: inout TapeBuilder) throws(VerificationError) {
        index += 1  // {
        let header = tape.entries.count
        tape.append(.object)
        var count = 0
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
                guard case .ascii(let range) = try scanString(), count < maxTapeMembers else { throw leftToParser }
                let tag = JSONObject.tag(ofUTF8: UnsafeBufferPointer(rebasing: bytes[range]))
                if tape.hasMember(UnsafeBufferPointer(rebasing: bytes[range]), tag: tag, ofObjectAt: header, count: count, in: bytes) {
                    throw VerificationError(.duplicateJSONMember, "a member appears more than once")
                }
                tape.append(.name, bits: tag, first: range.lowerBound, second: range.upperBound)
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                index += 1
                skipWhitespace()
                try tapeValue(depth: depth, &tape)
                count += 1
                guard try another(in: .object) else { break }
            }
        }
        tape.listMembers(ofObjectAt: header, count: count)
        tape.entries[header].first = Int32(truncatingIfNeeded: tape.entries.count)
        tape.entries[header].second = Int32(truncatingIfNeeded: count)
    }

    private mutating func tapeArray(depth: Int, _ tape: inout TapeBuilder) throws(VerificationError) {
        index += 1  // [
        let header = tape.entries.count
        tape.append(.array)
        var count = 0
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                try tapeValue(depth: depth, &tape)
                count += 1
                guard try another(in: .array) else { break }
            }
        }
        tape.entries[header].first = Int32(truncatingIfNeeded: tape.entries.count)
        tape.entries[header].second = Int32(truncatingIfNeeded: count)
    }
}
