/// A strict, bounded RFC 8259 JSON parser over bytes.
///
/// Differences from Foundation's `JSONDecoder`, all deliberate:
/// - duplicate member names are rejected (`duplicate-json-member`), after unescaping;
/// - nesting of objects and arrays is bounded (`json-too-deep`);
/// - the input must be exactly one value with optional surrounding whitespace (space, tab, CR, LF):
///   no BOM, no trailing data, no comments, no trailing commas, no `NaN`/`Infinity`;
/// - strings must be valid UTF-8 without raw control characters; `\u` escapes must not form lone surrogates;
/// - numbers follow the RFC grammar exactly (no leading zeros, `+`, or bare `.`); integers are exact `Int64`.
public struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// The most members ``JSONTape`` records for one object (see its initializer).
    var maxTapeMembers = JSONObject.indexThreshold
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Parses one JSON document.
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - maxDepth: The deepest allowed container nesting (a top-level object is depth 1).
    /// - Returns: The value.
    /// - Throws: ``VerificationError`` with `invalid-json`, `duplicate-json-member` or `json-too-deep`.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(VerificationError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("trailing data after the JSON value") }
        return value
    }

    /// Parses a JSON document from an array.
    public static func parse(_ bytes: [UInt8], maxDepth: Int) throws(VerificationError) -> JSONValue {
        let result: Result<JSONValue, VerificationError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(VerificationError) { return .success(try parse(buffer, maxDepth: maxDepth)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    func failure(_ detail: String) -> VerificationError {
        VerificationError(.invalidJSON, "\(detail) at byte \(index)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(VerificationError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw VerificationError(.jsonTooDeep, "nesting deeper than \(maxDepth)") }
            return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw VerificationError(.jsonTooDeep, "nesting deeper than \(maxDepth)") }
            return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw failure("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(VerificationError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure("invalid literal") }
        let base = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != base[offset] {
            throw failure("invalid literal")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(VerificationError) -> JSONObject {
        index += 1  // {
        var object = JSONObject(capacity: depth == 1 ? 32 : 4)
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let name = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            guard object.insertUnique(name, value) else {
                throw VerificationError(.duplicateJSONMember, "member \"\(name.prefix(64))\" appears more than once")
            }
            guard try another(in: .object) else { return object }
        }
    }

    private mutating func parseArray(depth: Int) throws(VerificationError) -> [JSONValue] {
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            guard try another(in: .array) else { return elements }
        }
    }

    /// The two containers, for the separator checks they share.
    enum Container {
        case object, array

        var closing: UInt8 { self == .object ? UInt8(ascii: "}") : UInt8(ascii: "]") }
    }

    /// After a member or element: moves past the `,` before another (true) or past the closing
    /// bracket (false).
    mutating func another(in container: Container) throws(VerificationError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw failure(container == .object ? "unterminated object" : "unterminated array") }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return true
        }
        guard bytes[index] == container.closing else {
            throw failure(container == .object ? "expected ',' or '}'" : "expected ',' or ']'")
        }
        index += 1
        return false
    }

    private mutating func parseString() throws(VerificationError) -> String {
        switch try scanString() {
        case .ascii(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .decoded(let string): string
        }
    }

    /// A string's content: where its bytes lie when they are plain ASCII (no escapes), else the
    /// decoded (unescaped, UTF-8-validated) string.
    enum ScannedString {
        case ascii(Range<Int>)
        case decoded(String)
    }

    /// Scans the string at `index` (its opening quote) and moves past its closing quote, checking
    /// it as ``parse(_:maxDepth:)`` does, without building a `String` for plain ASCII content.
    mutating func scanString() throws(VerificationError) -> ScannedString {
        index += 1  // opening quote
        let start = index
        var asciiOnly = true
        while index < bytes.count {
            skipPlainASCII()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let range = start..<index
                index += 1
                if asciiOnly { return .ascii(range) }
                guard let string = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
                    throw failure("invalid UTF-8 in string")
                }
                return .decoded(string)
            }
            if byte == UInt8(ascii: "\\") { return .decoded(try parseEscapedString(from: start)) }
            if byte < 0x20 { throw failure("unescaped control character in string") }
            if byte >= 0x80 { asciiOnly = false }
            index += 1
        }
        throw failure("unterminated string")
    }

    /// Skips string content that needs no attention (no quote, backslash, control character or
    /// non-ASCII byte) up to the first byte that does: 64 bytes per test while none is there (a
    /// JWS payload is kilobytes of such bytes), then 16 (SSE2), then 8. Stops exactly at that
    /// byte, so the caller looks at it once instead of re-scanning its block.
    @inline(__always)
    private mutating func skipPlainASCII() {
        guard let base = bytes.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        let quote = SIMD16<UInt8>(repeating: 0x22), backslash = SIMD16<UInt8>(repeating: 0x5C)
        let space = SIMD16<Int8>(repeating: 0x20)
        // As signed bytes, the control characters and every non-ASCII byte are below 0x20.
        @inline(__always) func special(at offset: Int) -> SIMDMask<SIMD16<Int8>> {
            let block = raw.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
            return (block .== quote) .| (block .== backslash) .| (unsafeBitCast(block, to: SIMD16<Int8>.self) .< space)
        }
        // Each lane is 0 or all ones; tested as two words (`any` compiles to a slow reduction).
        while bytes.count &- index >= 64 {
            let lanes = unsafeBitCast(special(at: index) .| special(at: index &+ 16) .| special(at: index &+ 32)
                                          .| special(at: index &+ 48), to: SIMD2<UInt64>.self)
            if lanes[0] | lanes[1] != 0 { break }
            index &+= 64
        }
        while bytes.count &- index >= 16 {
            let lanes = unsafeBitCast(special(at: index), to: SIMD2<UInt64>.self)
            if lanes[0] != 0 { index &+= Self.firstFlaggedByte(lanes[0]); return }
            if lanes[1] != 0 { index &+= 8 &+ Self.firstFlaggedByte(lanes[1]); return }
            index &+= 16
        }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while bytes.count &- index >= 8 {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            // A byte is zero (or below 0x20) exactly when a borrow reaches its high bit with that
            // bit clear; a borrow only runs upwards, so the lowest flagged byte is a real one.
            let special = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                | ((word &- ones &* 0x20) & ~word) | word) & highs
            if special != 0 { index &+= Self.firstFlaggedByte(special); return }
            index &+= 8
        }
    }

    /// The offset of the first byte in memory whose high bit is set in `word` (loaded from there).
    /// On a big-endian machine a borrow of the word test can flag a byte before the real one, so
    /// there it answers 0 and the caller checks the bytes one by one.
    @inline(__always)
    private static func firstFlaggedByte(_ word: UInt64) -> Int {
        #if _endian(little)
        word.trailingZeroBitCount &>> 3
        #else
        0
        #endif
    }

    /// Slow path for strings containing escapes: unescape into a buffer, then validate UTF-8.
    private mutating func parseEscapedString(from start: Int) throws(VerificationError) -> String {
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else { throw failure("invalid UTF-8 in string") }
                return string
            }
            if byte < 0x20 { throw failure("unescaped control character in string") }
            guard byte == UInt8(ascii: "\\") else {
                buffer.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { throw failure("unterminated escape") }
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""): buffer.append(0x22)
            case UInt8(ascii: "\\"): buffer.append(0x5C)
            case UInt8(ascii: "/"): buffer.append(0x2F)
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(try parseHex4())
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("lone high surrogate escape")
                    }
                    index += 2
                    let low = UInt32(try parseHex4())
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("invalid surrogate pair escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("lone low surrogate escape")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid escape") }
                buffer.append(contentsOf: UTF8.encode(unicode)!)
            default:
                throw failure("invalid escape")
            }
        }
        throw failure("unterminated string")
    }

    private mutating func parseHex4() throws(VerificationError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(VerificationError) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
        // Integer part: magnitude accumulated as UInt64 to catch overflow.
        var magnitude: UInt64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw failure("leading zero in number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                magnitude = m2
                overflow = overflow || o1 || o2
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid fraction") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger && !overflow {
            if negative {
                if magnitude <= UInt64(Int64.max) { return .integer(-Int64(magnitude)) }
                if magnitude == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
            } else if magnitude <= UInt64(Int64.max) {
                return .integer(Int64(magnitude))
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw failure("number out of range") }
        return .number(double)
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }
}
