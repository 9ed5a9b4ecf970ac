/// One receipt attribute exactly as signed: `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
///
/// Attributes the model does not name (Apple reserves and adds types without documenting them)
/// are kept in this raw form in ``AppReceipt/otherAttributes`` and
/// ``InAppPurchaseReceipt/otherAttributes``, so an unknown type is never fatal and nothing
/// signed is lost.
public struct ReceiptAttribute: Sendable, Hashable {
    /// The attribute type, e.g. `2` (bundle id) or `1703` (transaction id).
    public let type: Int64
    /// The attribute version (Apple uses `1`, and `2` for some opaque values).
    public let version: Int64
    /// The contents of the value OCTET STRING: usually one DER element, raw bytes for types 4 and 5.
    public let value: [UInt8]

    /// Creates an attribute.
    /// - Parameters:
    ///   - type: The attribute type.
    ///   - version: The attribute version.
    ///   - value: The value OCTET STRING contents.
    public init(type: Int64, version: Int64, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }

    /// The value read as one DER INTEGER, or `nil` when it is not exactly one 64-bit INTEGER.
    public var integerValue: Int64? {
        var reader = DERReader(value)
        guard let element = try? reader.next(), reader.isAtEnd else { return nil }
        return try? reader.integer(element)
    }

    /// The value read as one DER UTF8String, IA5String or PrintableString, or `nil` otherwise.
    public var stringValue: String? {
        var reader = DERReader(value)
        guard let element = try? reader.next(), reader.isAtEnd,
              [DERReader.Tag.utf8String, DERReader.Tag.ia5String, DERReader.Tag.printableString].contains(element.tag)
        else { return nil }
        return String(validating: reader.contents(of: element), as: UTF8.self)
    }
}
