/// A JSON value produced by ``JSONParser``.
///
/// Numbers written without fraction or exponent that fit in `Int64` are ``integer(_:)``; every
/// other number is ``number(_:)``, so callers can insist on integers (millisecond dates).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The JSON type name, for error details.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object whose member names are unique (the parser rejects duplicates).
public struct JSONObject: Sendable, Equatable {
    public var members: [String: JSONValue]

    public init(members: [String: JSONValue] = [:]) {
        self.members = members
    }

    /// The member value, or `nil` when absent.
    public subscript(key: String) -> JSONValue? { members[key] }

    /// Member names in arbitrary order.
    public var keys: Dictionary<String, JSONValue>.Keys { members.keys }
}
