/// One structured log value. Literals of the usual kinds convert implicitly, so call sites read
/// `logger.info("x", metadata: ["kafka.partition": 3, "stage.name": "verify"])`.
public enum MetadataValue: Sendable, Equatable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByStringInterpolation {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// Wraps any integer.
    public static func integer<I: BinaryInteger>(_ value: I) -> MetadataValue { .int(Int64(value)) }

    public var description: String {
        switch self {
        case .string(let s): s
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .bool(let b): String(b)
        }
    }
}
