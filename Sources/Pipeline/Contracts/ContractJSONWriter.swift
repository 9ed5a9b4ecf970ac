import Foundation

/// Compact JSON written straight into one byte buffer: the one place that escapes strings and
/// formats numbers and timestamps for the contracts, used by ``ContractWritable`` conformers and by
/// ``ContractJSONEncoder`` alike, so both paths write the same bytes by construction.
///
/// Separators are tracked here: every key, value or container start writes the comma it needs,
/// so a conformer writes only keys and values, in sorted key order.
struct ContractJSONWriter {
    /// What has been written so far.
    private(set) var bytes: [UInt8]
    /// Whether the next key, value or container needs a comma before it.
    private var needsComma = false

    /// Creates a writer with `capacity` bytes reserved, so a contract usually costs one allocation.
    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: structure

    mutating func beginObject() {
        separate()
        bytes.append(0x7B)
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(0x7D)
        needsComma = true
    }

    mutating func beginArray() {
        separate()
        bytes.append(0x5B)
        needsComma = false
    }

    mutating func endArray() {
        bytes.append(0x5D)
        needsComma = true
    }

    /// Writes `"name":`. The name is a contract's ASCII member name, written as it is (no escaping).
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(0x22)
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(0x22)
        bytes.append(0x3A)
        needsComma = false
    }

    /// Writes `"name":` for a key only known at run time (the Codable path), escaped.
    mutating func key(_ name: String) {
        separate()
        Self.appendEscaped(name, to: &bytes)
        bytes.append(0x3A)
        needsComma = false
    }

    // MARK: scalars

    mutating func null() {
        separate()
        appendStatic("null")
        needsComma = true
    }

    mutating func value(_ flag: Bool) {
        separate()
        appendStatic(flag ? "true" : "false")
        needsComma = true
    }

    mutating func value(_ string: String) {
        separate()
        Self.appendEscaped(string, to: &bytes)
        needsComma = true
    }

    mutating func value(_ integer: Int) {
        value(Int64(integer))
    }

    /// Writes the decimal digits without building a `String`.
    mutating func value(_ integer: Int64) {
        separate()
        if integer < 0 { bytes.append(0x2D) }
        appendDigits(integer.magnitude)
        needsComma = true
    }

    mutating func value(_ integer: UInt64) {
        separate()
        appendDigits(integer)
        needsComma = true
    }

    /// Writes a finite double as Foundation's `JSONEncoder` does: Swift's shortest round-trip form
    /// without a trailing `.0`. The caller refuses non-finite values.
    mutating func value(_ number: Double) {
        appendNumber(number.description)
    }

    /// As ``value(_:)-(Double)``, in `Float`'s own shortest form.
    mutating func value(_ number: Float) {
        appendNumber(number.description)
    }

    /// Writes a contract timestamp (see ``ContractTimestamp``) as a JSON string.
    mutating func timestamp(_ date: Date) {
        separate()
        bytes.append(0x22)
        ContractTimestamp.append(date, alwaysMilliseconds: false, to: &bytes)
        bytes.append(0x22)
        needsComma = true
    }

    // MARK: members (a key, then its value; optionals as explicit `null`)

    mutating func member(_ name: StaticString, _ string: String) {
        key(name)
        value(string)
    }

    mutating func member(_ name: StaticString, _ string: String?) {
        key(name)
        if let string { value(string) } else { null() }
    }

    mutating func member(_ name: StaticString, _ integer: Int) {
        key(name)
        value(Int64(integer))
    }

    mutating func member(_ name: StaticString, _ integer: Int?) {
        key(name)
        if let integer { value(Int64(integer)) } else { null() }
    }

    mutating func member(_ name: StaticString, _ flag: Bool) {
        key(name)
        value(flag)
    }

    mutating func member(_ name: StaticString, _ flag: Bool?) {
        key(name)
        if let flag { value(flag) } else { null() }
    }

    mutating func member(_ name: StaticString, timestamp date: Date) {
        key(name)
        timestamp(date)
    }

    mutating func member(_ name: StaticString, timestamp date: Date?) {
        key(name)
        if let date { timestamp(date) } else { null() }
    }

    /// A `String`-backed enumeration or code, written as its raw value.
    mutating func member<Raw: RawRepresentable<String>>(_ name: StaticString, raw: Raw) {
        key(name)
        value(raw.rawValue)
    }

    mutating func member<Value: ContractWritable>(_ name: StaticString, _ nested: Value) {
        key(name)
        nested.write(to: &self)
    }

    mutating func member<Value: ContractWritable>(_ name: StaticString, _ nested: Value?) {
        key(name)
        if let nested { nested.write(to: &self) } else { null() }
    }

    mutating func member(_ name: StaticString, _ strings: [String]) {
        key(name)
        beginArray()
        for string in strings { value(string) }
        endArray()
    }

    mutating func member<Value: ContractWritable>(_ name: StaticString, _ items: [Value]) {
        key(name)
        beginArray()
        for item in items { item.write(to: &self) }
        endArray()
    }

    // MARK: bytes

    private mutating func separate() {
        if needsComma { bytes.append(0x2C) }
    }

    private mutating func appendStatic(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendNumber(_ text: String) {
        separate()
        var text = text
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    private mutating func appendDigits(_ magnitude: UInt64) {
        Self.appendDigits(magnitude, to: &bytes)
    }

    /// Appends the decimal digits of `magnitude` (most significant first).
    static func appendDigits(_ magnitude: UInt64, to out: inout [UInt8]) {
        if magnitude < 10 {
            out.append(0x30 &+ UInt8(truncatingIfNeeded: magnitude))
            return
        }
        var count = 1
        var probe = magnitude
        while probe >= 10 { probe /= 10; count += 1 }
        let start = out.count
        out.append(contentsOf: repeatElement(0x30, count: count))
        out.withUnsafeMutableBufferPointer { buffer in
            var rest = magnitude
            var index = start + count - 1
            while rest != 0 {
                buffer[index] = 0x30 &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
                index -= 1
            }
        }
    }

    /// Appends `string` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\r`,
    /// `\t`, `\b`, `\f` or `\u00XX`, everything else (`/`, non-ASCII) as its UTF-8 bytes.
    static func appendEscaped(_ string: String, to out: inout [UInt8]) {
        out.append(0x22)
        var string = string
        string.withUTF8 { bytes in
            var start = 0
            var index = 0
            while index < bytes.count {
                // Eight bytes at a time while none needs escaping (a JWS of a few KiB never does).
                if index + 8 <= bytes.count,
                   !Self.needsEscape(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                    continue
                }
                let byte = bytes[index]
                index += 1
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                let escaped = index - 1
                if start < escaped { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<escaped])) }
                start = index
                out.append(0x5C)
                switch byte {
                case 0x22: out.append(0x22)
                case 0x5C: out.append(0x5C)
                case 0x0A: out.append(0x6E)
                case 0x0D: out.append(0x72)
                case 0x09: out.append(0x74)
                case 0x08: out.append(0x62)
                case 0x0C: out.append(0x66)
                default:
                    out.append(0x75)
                    out.append(0x30)
                    out.append(0x30)
                    out.append(Hex.digit(byte >> 4))
                    out.append(Hex.digit(byte & 0x0F))
                }
            }
            if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        }
        out.append(0x22)
    }

    /// Whether any of the eight bytes in `word` is a control character, `"` or `\`, with the
    /// usual bit tricks: a byte b is flagged when b < 0x20, b ^ 0x22 == 0 or b ^ 0x5C == 0
    /// (bytes ≥ 0x80 never are).
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let control = (word &- ones &* 0x20) & ~word & highs != 0
        return control || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
    }
}
