/// One Kafka record header. Kafka allows repeated keys and `null` values, so headers are an
/// ordered list of pairs rather than a dictionary.
public struct RecordHeader: Hashable, Sendable {
    /// The header name (receiptd's own are listed in ``RecordHeaders``).
    public var key: String
    /// The raw value; nil is Kafka's `null` header value.
    public var value: [UInt8]?

    /// Creates a header with raw bytes (or `null`).
    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }

    /// A header whose value is the UTF-8 encoding of `text`.
    public init(key: String, text: String) {
        self.init(key: key, value: Array(text.utf8))
    }
}
