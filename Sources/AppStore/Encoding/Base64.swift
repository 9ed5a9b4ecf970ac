import Observability

/// Strict standard base64 (RFC 4648 §4) with mandatory padding, as used by `x5c` entries
/// (RFC 7515 §4.1.6) and PEM bodies.
///
/// Canonical input only: alphabet `A-Z a-z 0-9 + /`, length a multiple of 4, `=` only as the final
/// one or two characters, zero unused bits, no whitespace.
enum Base64 {
    private static let decodeTable: [UInt8] = Base64URL.makeTable(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    private static let alphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Decodes canonical padded base64.
    /// - Returns: The bytes, or `nil` when the input is not canonical.
    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        guard count % 4 == 0 else { return nil }
        if count == 0 { return [] }
        let padding = input[count - 1] == UInt8(ascii: "=") ? (input[count - 2] == UInt8(ascii: "=") ? 2 : 1) : 0
        var output: [UInt8] = []
        output.reserveCapacity(count / 4 * 3)
        let ok = decodeTable.withUnsafeBufferPointer { table -> Bool in
            var i = 0
            while i < count {
                let last = i + 4 == count
                let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                var c = table[Int(input[i + 2])], d = table[Int(input[i + 3])]
                if last && padding >= 1 { d = 0 }
                if last && padding == 2 { c = 0 }
                if (a | b | c | d) & 0x80 != 0 { return false }
                if last && padding == 2 {
                    if b & 0x0F != 0 { return false }
                    output.append(a << 2 | b >> 4)
                } else if last && padding == 1 {
                    if c & 0x03 != 0 { return false }
                    output.append(a << 2 | b >> 4)
                    output.append(b << 4 | c >> 2)
                } else {
                    output.append(a << 2 | b >> 4)
                    output.append(b << 4 | c >> 2)
                    output.append(c << 6 | d)
                }
                i += 4
            }
            return true
        }
        return ok ? output : nil
    }

    /// Decodes a canonical padded base64 string.
    static func decode(_ string: String) -> [UInt8]? {
        string.withUTF8InPlace { decode($0) }
    }

    /// Encodes bytes as padded base64.
    static func encode(_ input: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i < input.count {
            let remaining = input.count - i
            let b0 = UInt32(input[i])
            let b1 = remaining > 1 ? UInt32(input[i + 1]) : 0
            let b2 = remaining > 2 ? UInt32(input[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int(v >> 18 & 63)])
            output.append(alphabet[Int(v >> 12 & 63)])
            output.append(remaining > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
