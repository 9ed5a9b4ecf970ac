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
