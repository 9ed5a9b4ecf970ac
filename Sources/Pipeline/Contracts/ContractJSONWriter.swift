import Foundation
import Observability

/// Compact JSON written straight into one byte buffer: the one place that escapes strings and
/// formats numbers and timestamps for the contracts, used by ``ContractWritable`` conformers and by
/// ``ContractJSONEncoder`` alike, so both paths write the same bytes by construction.
///
/// Separators are tracked here: every key, value or container start writes the comma it needs,
/// so a conformer writes only keys and values, in sorted key order.
///
/// The bytes go into a buffer of the writer's own, not an `Array`: an `Array` append checks
/// uniqueness and capacity through generic code on every call, which profiles showed as most of
/// the cost of writing (a contract is a few hundred small appends).
struct ContractJSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether the next key, value or container needs a comma before it.
    private var needsComma = false

    /// Creates a writer with `capacity` bytes reserved, so a contract usually never grows.
    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// What has been written so far.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    // MARK: structure

    mutating func beginObject() {
        separate()
        append(0x7B)
        needsComma = false
    }

    mutating func endObject() {
        append(0x7D)
        needsComma = true
    }

    mutating func beginArray() {
        separate()
        append(0x5B)
        needsComma = false
    }

    mutating func endArray() {
        append(0x5D)
        needsComma = true
    }

    /// Writes `"name":`. The name is a contract's ASCII member name, written as it is (no escaping).
    mutating func key(_ name: StaticString) {
        let length = name.utf8CodeUnitCount
        reserve(length + 4)
        if needsComma {
            base[count] = 0x2C
            count += 1
        }
        base[count] = 0x22
        (base + count + 1).update(from: name.utf8Start, count: length)
        base[count + 1 + length] = 0x22
        base[count + 2 + length] = 0x3A
        count += length + 3
        needsComma = false
    }

    /// Writes `"name":` for a key only known at run time (the Codable path), escaped.
    mutating func key(_ name: String) {
        separate()
        appendEscaped(name)
        append(0x3A)
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
        appendEscaped(string)
        needsComma = true
    }

    mutating func value(_ integer: Int) {
        value(Int64(integer))
    }

    /// Writes the decimal digits without building a `String`.
    mutating func value(_ integer: Int64) {
        separate()
        if integer < 0 { append(0x2D) }
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
        reserve(ContractTimestamp.maxCount + 2)
        base[count] = 0x22
        count += 1 + ContractTimestamp.write(date, alwaysMilliseconds: false, to: base + count + 1)
        base[count] = 0x22
        count += 1
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

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toHold: count + extra) }
    }

    @inline(never)
    private mutating func grow(toHold needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    private mutating func append(_ run: UnsafeBufferPointer<UInt8>) {
        guard let start = run.baseAddress, run.count > 0 else { return }
        reserve(run.count)
        (base + count).update(from: start, count: run.count)
        count += run.count
    }

    private mutating func separate() {
        if needsComma { append(0x2C) }
    }

    private mutating func appendStatic(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendNumber(_ text: String) {
        separate()
        var text = text
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { append($0) }
        needsComma = true
    }

    private mutating func appendDigits(_ magnitude: UInt64) {
        reserve(Self.maxDigits)
        count += Self.writeDigits(magnitude, to: base + count)
    }

    /// Decimal digits of the largest `UInt64`.
    static let maxDigits = 20

    /// Writes the decimal digits of `magnitude` (most significant first) at `out`, which has room
    /// for ``maxDigits``. - Returns: how many were written.
    static func writeDigits(_ magnitude: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var digits = 1
        var probe = magnitude
        while probe >= 10 { probe /= 10; digits += 1 }
        var rest = magnitude
        for index in stride(from: digits - 1, through: 0, by: -1) {
            out[index] = 0x30 &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        return digits
    }

    /// Appends `string` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\r`,
    /// `\t`, `\b`, `\f` or `\u00XX`, everything else (`/`, non-ASCII) as its UTF-8 bytes.
    private mutating func appendEscaped(_ string: String) {
        append(0x22)
        string.withUTF8InPlace { bytes in
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
                append(UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]))
                start = index
                switch byte {
                case 0x22: appendPair(0x5C, 0x22)
                case 0x5C: appendPair(0x5C, 0x5C)
                case 0x0A: appendPair(0x5C, 0x6E)
                case 0x0D: appendPair(0x5C, 0x72)
                case 0x09: appendPair(0x5C, 0x74)
                case 0x08: appendPair(0x5C, 0x62)
                case 0x0C: appendPair(0x5C, 0x66)
                default:
                    appendPair(0x5C, 0x75)
                    appendPair(0x30, 0x30)
                    appendPair(Hex.digit(byte >> 4), Hex.digit(byte & 0x0F))
                }
            }
            append(UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        append(0x22)
    }

    private mutating func appendPair(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count + 1] = second
        count += 2
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
