/// One Kafka record header.
///
/// Headers carry metadata beside the payload (provenance, attempt counts,
/// content types) so that stages never have to re-encode the payload to add it.
public struct KafkaHeader: Sendable, Hashable {
    /// The header name. Kafka allows duplicate names; order is preserved.
    public var key: String
    /// The header value, or `nil` for a header that is present without a value.
    public var value: [UInt8]?

    /// Creates a header from raw bytes.
    /// - Parameters:
    ///   - key: The header name.
    ///   - value: The raw value, or `nil` for a null header.
    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }

    /// Creates a header whose value is the UTF-8 encoding of `value`.
    ///
    /// Most headers in this project are textual, so this saves every call site
    /// from spelling out `Array(string.utf8)`.
    /// - Parameters:
    ///   - key: The header name.
    ///   - value: The textual value.
    public init(key: String, string value: String) {
        self.init(key: key, value: Array(value.utf8))
    }

    /// The value decoded as UTF-8, or `nil` when the header has no value or is not valid UTF-8.
    public var stringValue: String? {
        guard let value else { return nil }
        return String(validating: value, as: UTF8.self)
    }
}

extension Array where Element == KafkaHeader {
    /// The value of the first header named `key`, so callers can read a header without a loop.
    /// - Parameter key: The header name to look up.
    /// - Returns: The first matching value (which may itself be `nil`), or `nil` when absent.
    public func first(named key: String) -> KafkaHeader? {
        first { $0.key == key }
    }
}
