import Foundation

/// Decodes the signed content of an app receipt into ``AppReceipt``.
///
/// Grammar (DER): `ReceiptPayload ::= SET OF ReceiptAttribute`,
/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, where
/// the value holds one DER element (UTF8String, IA5String date, INTEGER) or raw bytes (types 4
/// and 5), and each type 17 value holds a nested `SET OF ReceiptAttribute` for one purchase.
/// Xcode-generated receipts wrap the SET in one more OCTET STRING; that wrapper is removed.
///
/// Rules: unknown types are kept raw; a documented attribute that appears twice is rejected
/// (`invalid-receipt`: the receipt would be ambiguous); a documented attribute whose value has the
/// wrong ASN.1 type is `invalid-field`; an unparseable date is `invalid-date`; anything
/// structurally wrong (lengths, trailing bytes, depth) is `invalid-receipt`. The walk is
/// iterative with at most two nested SETs, so input size alone bounds the work.
enum ReceiptPayloadParser {
    /// Decodes a payload.
    /// - Parameter content: The PKCS#7 `id-data` content bytes.
    /// - Returns: The receipt model.
    /// - Throws: ``VerificationError`` `invalid-receipt`, `invalid-field` or `invalid-date`.
    static func parse(_ content: [UInt8]) throws(VerificationError) -> AppReceipt {
        var outer = DERReader(content)
        var top = try outer.next()
        if top.tag == DERReader.Tag.octetString {
            guard outer.isAtEnd else { throw DERReader.failure("trailing bytes after the payload") }
            var wrapped = try outer.reader(over: top)
            top = try wrapped.next()
            guard wrapped.isAtEnd else { throw DERReader.failure("trailing bytes after the payload SET") }
            outer = wrapped
        }
        guard top.tag == DERReader.Tag.set else { throw DERReader.failure("payload is not a SET of attributes") }
        guard outer.isAtEnd else { throw DERReader.failure("trailing bytes after the payload SET") }

        var receipt = AppReceipt()
        var seen: UInt64 = 0
        var attributes = try outer.reader(over: top)
        while !attributes.isAtEnd {
            let attribute = try readAttribute(&attributes)
            if let bit = singularBit(receiptType: attribute.type) {
                guard seen & bit == 0 else { throw DERReader.failure("attribute \(attribute.type) appears twice") }
                seen |= bit
            }
            switch attribute.type {
            case 0: receipt.rawReceiptType = try string(attribute)
            case 2:
                receipt.bundleId = try string(attribute)
                receipt.bundleIdData = attribute.rawValue
            case 3: receipt.applicationVersion = try string(attribute)
            case 4: receipt.opaqueValue = attribute.rawValue
            case 5: receipt.sha1Hash = attribute.rawValue
            case 12: receipt.receiptCreationDate = try date(attribute)
            case 17: receipt.inAppPurchases.append(try inAppPurchase(attribute))
            case 18: receipt.originalPurchaseDate = try date(attribute)
            case 19: receipt.originalApplicationVersion = try string(attribute)
            case 21: receipt.expirationDate = try date(attribute)
            default: receipt.otherAttributes.append(attribute.raw)
            }
        }
        return receipt
    }

    /// One purchase: the nested SET inside an attribute 17 value.
    private static func inAppPurchase(_ attribute: Attribute) throws(VerificationError) -> InAppPurchaseReceipt {
        var holder = try attribute.fields.reader(over: attribute.value)
        let set = try holder.next(tag: DERReader.Tag.set, "in-app purchase")
        guard holder.isAtEnd else { throw DERReader.failure("trailing bytes after an in-app purchase SET") }
        var purchase = InAppPurchaseReceipt()
        var seen: UInt64 = 0
        var attributes = try holder.reader(over: set)
        while !attributes.isAtEnd {
            let attribute = try readAttribute(&attributes)
            if let bit = singularBit(purchaseType: attribute.type) {
                guard seen & bit == 0 else { throw DERReader.failure("in-app attribute \(attribute.type) appears twice") }
                seen |= bit
            }
            switch attribute.type {
            case 1701: purchase.quantity = try integer(attribute)
            case 1702: purchase.productId = try string(attribute)
            case 1703: purchase.transactionId = try string(attribute)
            case 1704: purchase.purchaseDate = try date(attribute)
            case 1705: purchase.originalTransactionId = try string(attribute)
            case 1706: purchase.originalPurchaseDate = try date(attribute)
            case 1707: purchase.rawProductType = try integer(attribute)
            case 1708: purchase.expiresDate = try date(attribute)
            case 1711: purchase.webOrderLineItemId = try integer(attribute)
            case 1712: purchase.cancellationDate = try date(attribute)
            case 1713: purchase.isTrialPeriod = try integer(attribute) != 0
            case 1719: purchase.isInIntroOfferPeriod = try integer(attribute) != 0
            case 1721: purchase.promotionalOfferId = try string(attribute)
            default: purchase.otherAttributes.append(attribute.raw)
            }
        }
        return purchase
    }

    /// A parsed attribute header: type, version, the value OCTET STRING element and the reader
    /// over the attribute's fields (to descend into the value one level deeper).
    struct Attribute {
        let type: Int64
        let version: Int64
        let value: DERReader.Element
        let fields: DERReader

        /// The value OCTET STRING contents, copied.
        var rawValue: [UInt8] { Array(fields.contents(of: value)) }

        /// The attribute in its public raw form.
        var raw: ReceiptAttribute { ReceiptAttribute(type: type, version: version, value: rawValue) }
    }

    /// Reads `SEQUENCE { INTEGER, INTEGER, OCTET STRING }` with nothing else inside.
    private static func readAttribute(_ reader: inout DERReader) throws(VerificationError) -> Attribute {
        let sequence = try reader.next(tag: DERReader.Tag.sequence, "attribute")
        var fields = try reader.reader(over: sequence)
        let type = try fields.integer(try fields.next())
        let version = try fields.integer(try fields.next())
        let value = try fields.next(tag: DERReader.Tag.octetString, "attribute \(type) value")
        guard fields.isAtEnd else { throw DERReader.failure("attribute \(type) has more than three fields") }
        guard type >= 0 else { throw DERReader.failure("negative attribute type") }
        return Attribute(type: type, version: version, value: value, fields: fields)
    }

    /// A bit per documented receipt attribute that may appear at most once (17 repeats by design).
    private static func singularBit(receiptType type: Int64) -> UInt64? {
        switch type {
        case 0, 2, 3, 4, 5, 12, 18, 19, 21: 1 << UInt64(type)
        default: nil
        }
    }

    /// A bit per documented in-app attribute, each allowed at most once per purchase.
    private static func singularBit(purchaseType type: Int64) -> UInt64? {
        switch type {
        case 1701...1708, 1711, 1712, 1713, 1719, 1721: 1 << UInt64(type - 1701)
        default: nil
        }
    }

    /// The single DER element inside a value.
    private static func scalar(_ attribute: Attribute) throws(VerificationError) -> (DERReader, DERReader.Element) {
        var reader = try attribute.fields.reader(over: attribute.value)
        let element = try reader.next()
        guard reader.isAtEnd else { throw DERReader.failure("attribute \(attribute.type) value has trailing bytes") }
        return (reader, element)
    }

    private static func string(_ attribute: Attribute) throws(VerificationError) -> String {
        let (reader, element) = try scalar(attribute)
        switch element.tag {
        case DERReader.Tag.utf8String, DERReader.Tag.ia5String, DERReader.Tag.printableString: break
        default:
            throw VerificationError(.invalidField, "receipt attribute \(attribute.type) is not a string")
        }
        guard let text = String(validating: reader.contents(of: element), as: UTF8.self) else {
            throw VerificationError(.invalidField, "receipt attribute \(attribute.type) is not valid UTF-8")
        }
        return text
    }

    private static func integer(_ attribute: Attribute) throws(VerificationError) -> Int64 {
        let (reader, element) = try scalar(attribute)
        guard element.tag == DERReader.Tag.integer else {
            throw VerificationError(.invalidField, "receipt attribute \(attribute.type) is not an INTEGER")
        }
        return try reader.integer(element)
    }

    /// An IA5String (or UTF8String) timestamp; empty means absent.
    private static func date(_ attribute: Attribute) throws(VerificationError) -> Date? {
        let (reader, element) = try scalar(attribute)
        guard element.tag == DERReader.Tag.ia5String || element.tag == DERReader.Tag.utf8String else {
            throw VerificationError(.invalidField, "receipt attribute \(attribute.type) is not an IA5String date")
        }
        let text = reader.contents(of: element)
        if text.isEmpty { return nil }
        guard let date = ReceiptDate.parse(text) else {
            throw VerificationError(.invalidDate, "receipt attribute \(attribute.type) is not an RFC 3339 date")
        }
        return date
    }
}
