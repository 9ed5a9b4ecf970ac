/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Order and duplicates are preserved (some headers legitimately repeat), while lookups such as
/// `headers["retry-after"]` ignore case, because HTTP field names are case-insensitive.
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field as received or to be sent.
    public struct Field: Sendable, Equatable {
        /// The field name, with the case it was given in.
        public var name: String
        /// The field value, without surrounding whitespace.
        public var value: String

        /// Creates a field.
        /// - Parameters:
        ///   - name: The field name, for example `"Content-Type"`.
        ///   - value: The field value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// All fields in the order they were added or received.
    public private(set) var fields: [Field]

    /// Creates headers from ordered name/value pairs.
    /// - Parameter pairs: Fields in wire order; duplicates are kept.
    public init(_ pairs: [(String, String)] = []) {
        self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates headers from a literal such as `["Accept": "application/json"]`.
    /// - Parameter elements: Fields in literal order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value for `name` (case-insensitive), or `nil`; setting replaces every field of that name.
    /// - Parameter name: The field name, in any case.
    public subscript(name: String) -> String? {
        get { fields.first { Self.equalNames($0.name, name) }?.value }
        set {
            fields.removeAll { Self.equalNames($0.name, name) }
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Every value for `name` (case-insensitive), in wire order, for headers that may repeat.
    /// - Parameter name: The field name, in any case.
    /// - Returns: The values; empty when the header is absent.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equalNames($0.name, name) }.map(\.value)
    }

    /// Whether a field named `name` (case-insensitive) is present.
    /// - Parameter name: The field name, in any case.
    /// - Returns: `true` when at least one such field exists.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.equalNames($0.name, name) }
    }

    /// Appends a field, keeping any existing fields of the same name (use the subscript to replace).
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name` (case-insensitive).
    /// - Parameter name: The field name, in any case.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.equalNames($0.name, name) }
    }

    /// The number of fields, counting duplicates.
    public var count: Int { fields.count }

    /// `Name: value` lines, for debugging output.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// ASCII case-insensitive comparison; field names are tokens, so no Unicode folding is needed.
    static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        let l = lhs.utf8, r = rhs.utf8
        guard l.count == r.count else { return false }
        for (a, b) in zip(l, r) where a != b {
            let la = (a >= 65 && a <= 90) ? a | 0x20 : a
            let lb = (b >= 65 && b <= 90) ? b | 0x20 : b
            if la != lb { return false }
        }
        return true
    }
}

extension HTTPHeaders: Sequence {
    /// Iterates the fields in wire order.
    /// - Returns: An iterator over ``Field`` values.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}
