/// A bounded, non-recursive reader of DER TLV elements over a byte array, used for the attribute
/// SET inside an app receipt (the PKCS#7 envelope itself is parsed by OpenSSL).
///
/// Why a hand-written reader: the receipt payload is a tiny, fixed grammar (SET of
/// `SEQUENCE { INTEGER, INTEGER, OCTET STRING }`, one nested SET per in-app purchase), and parsing
/// it after the signature check with a 150-line reader is cheaper and easier to bound than
/// driving OpenSSL's generic ASN.1 machinery.
///
/// Safety properties (the input may be attacker-controlled, e.g. in ``ReceiptUtility``):
/// - every length is checked against the enclosing element before use; lengths are DER-minimal
///   definite lengths of at most 4 bytes (indefinite BER lengths are rejected);
/// - only single-byte identifiers (tag numbers below 31) are accepted;
/// - descending into an element creates a child reader whose ``depth`` is one more, and more than
///   ``maxDepth`` levels are refused, so nesting can never blow the stack (nothing recurses);
/// - failures are ``VerificationError`` `invalid-receipt`, never traps.
struct DERReader {
    /// One element: its identifier octet and the index ranges of its encoding and contents in ``bytes``.
    struct Element {
        /// The identifier octet (class, constructed bit, tag number).
        let tag: UInt8
        /// Indices of the whole encoding (identifier, length, contents) within the reader's ``bytes``.
        let encoding: Range<Int>
        /// Indices of the contents octets within the reader's ``bytes``.
        var content: Range<Int> { (encoding.upperBound - contentCount)..<encoding.upperBound }
        /// Number of contents octets.
        let contentCount: Int

        /// Whether the constructed bit is set.
        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    /// ASN.1 universal tags the receipt grammar uses.
    enum Tag {
        static let integer: UInt8 = 0x02
        static let octetString: UInt8 = 0x04
        static let utf8String: UInt8 = 0x0C
        static let printableString: UInt8 = 0x13
        static let ia5String: UInt8 = 0x16
        static let sequence: UInt8 = 0x30
        static let set: UInt8 = 0x31
    }

    /// Deepest accepted nesting. A receipt needs 6 (payload SET, attribute, in-app value, in-app
    /// SET, in-app attribute, scalar value); 8 leaves room without allowing abuse.
    static let maxDepth = 8

    /// The whole buffer (shared, never copied); the reader only looks at ``position``..<``end``.
    let bytes: [UInt8]
    /// Index of the next unread identifier octet.
    private(set) var position: Int
    /// End of this reader's window (exclusive).
    let end: Int
    /// Nesting level of this window (0 for the outermost).
    let depth: Int

    /// A reader over all of `bytes` at depth 0.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.position = 0
        self.end = bytes.count
        self.depth = 0
    }

    private init(bytes: [UInt8], window: Range<Int>, depth: Int) {
        self.bytes = bytes
        self.position = window.lowerBound
        self.end = window.upperBound
        self.depth = depth
    }

    /// Whether every element of the window has been read.
    var isAtEnd: Bool { position >= end }

    /// Reads the next element header and skips over its contents.
    /// - Returns: The element (identifier and contents range).
    /// - Throws: `invalid-receipt` for a truncated, indefinite, non-minimal or oversized length or
    ///   a multi-byte identifier.
    mutating func next() throws(VerificationError) -> Element {
        guard end - position >= 2 else { throw Self.failure("truncated element header") }
        let tag = bytes[position]
        guard tag & 0x1F != 0x1F else { throw Self.failure("multi-byte ASN.1 identifiers are not used by receipts") }
        let first = bytes[position + 1]
        var cursor = position + 2
        let length: Int
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count != 0 else { throw Self.failure("indefinite length (BER) is not DER") }
            guard count <= 4 else { throw Self.failure("length field of \(count) bytes") }
            guard end - cursor >= count else { throw Self.failure("truncated length field") }
            guard bytes[cursor] != 0 else { throw Self.failure("non-minimal length encoding") }
            var value = 0
            for index in cursor..<(cursor + count) { value = value << 8 | Int(bytes[index]) }
            guard value >= 0x80 else { throw Self.failure("non-minimal length encoding") }
            length = value
            cursor += count
        }
        guard length <= end - cursor else {
            throw Self.failure("element length \(length) exceeds the \(end - cursor) bytes left")
        }
        let start = position
        position = cursor + length
        return Element(tag: tag, encoding: start..<position, contentCount: length)
    }

    /// Reads the next element and requires its identifier.
    /// - Throws: `invalid-receipt` when the element is malformed or has another identifier.
    mutating func next(tag: UInt8, _ what: String) throws(VerificationError) -> Element {
        let element = try next()
        guard element.tag == tag else { throw Self.failure("\(what): unexpected ASN.1 tag 0x\(String(element.tag, radix: 16))") }
        return element
    }

    /// A reader over an element's contents, one level deeper (constructed children, or the DER
    /// held inside an OCTET STRING).
    /// - Throws: `invalid-receipt` beyond ``maxDepth``.
    func reader(over element: Element) throws(VerificationError) -> DERReader {
        guard depth < Self.maxDepth else { throw Self.failure("nesting deeper than \(Self.maxDepth) levels") }
        return DERReader(bytes: bytes, window: element.content, depth: depth + 1)
    }

    /// The contents octets of an element.
    func contents(of element: Element) -> ArraySlice<UInt8> {
        bytes[element.content]
    }

    /// The whole encoding of an element (identifier, length and contents).
    func encoding(of element: Element) -> ArraySlice<UInt8> {
        bytes[element.encoding]
    }

    /// The DER identifier and definite length octets for `count` contents octets.
    static func header(tag: UInt8, count: Int) -> [UInt8] {
        if count < 0x80 { return [tag, UInt8(count)] }
        var octets: [UInt8] = []
        var remaining = count
        while remaining > 0 {
            octets.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        return [tag, 0x80 | UInt8(octets.count)] + octets
    }

    /// The value of an INTEGER element as a signed 64-bit number.
    /// - Throws: `invalid-receipt` when it is not an INTEGER, is empty, longer than 8 bytes or
    ///   not minimally encoded.
    func integer(_ element: Element) throws(VerificationError) -> Int64 {
        guard element.tag == Tag.integer else { throw Self.failure("expected INTEGER, found tag 0x\(String(element.tag, radix: 16))") }
        let octets = bytes[element.content]
        guard let first = octets.first else { throw Self.failure("empty INTEGER") }
        guard octets.count <= 8 else { throw Self.failure("INTEGER wider than 64 bits") }
        if octets.count > 1 {
            let second = octets[octets.startIndex + 1]
            if (first == 0x00 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) {
                throw Self.failure("non-minimal INTEGER encoding")
            }
        }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for octet in octets { value = value << 8 | Int64(octet) }
        return value
    }

    /// An `invalid-receipt` error with a detail prefixed by where it happened.
    static func failure(_ detail: String) -> VerificationError {
        VerificationError(.invalidReceipt, "receipt payload: \(detail)")
    }
}
