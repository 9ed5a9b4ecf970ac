import Observability

/// Strict base64url (RFC 4648 §5) without padding, as used by compact JWS segments.
///
/// Canonical input only: alphabet `A-Z a-z 0-9 - _`, no `=`, no `+`/`/`, no whitespace, a length
/// that is not `1 (mod 4)`, and zero bits in the unused low bits of the last character, so every
/// byte string has exactly one accepted encoding.
enum Base64URL {
    /// 0xFF marks a byte outside the alphabet.
    private static let decodeTable: [UInt8] = makeTable(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    private static let encodeAlphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func makeTable(_ alphabet: String) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.utf8.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }

    /// The decoded length for an encoded length, or `nil` when no canonical input has that length.
    static func decodedCount(forEncodedCount count: Int) -> Int? {
        switch count % 4 {
        case 0: return count / 4 * 3
        case 2: return count / 4 * 3 + 1
        case 3: return count / 4 * 3 + 2
        default: return nil
        }
    }

    /// Decodes canonical unpadded base64url.
    /// - Parameter input: The encoded bytes.
    /// - Returns: The decoded bytes, or `nil` when the input is not canonical.
    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let outCount = decodedCount(forEncodedCount: input.count) else { return nil }
        var ok = true
        let output = [UInt8](unsafeUninitializedCapacity: outCount) { out, initialized in
            ok = decode(input, into: UnsafeMutableBufferPointer(rebasing: out[0..<outCount]))
            initialized = ok ? outCount : 0
        }
        return ok ? output : nil
    }

    /// Decodes canonical unpadded base64url into a buffer of exactly the decoded size.
    /// - Returns: `false` when the input is not canonical (the buffer content is then unspecified).
    static func decode(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        guard decodedCount(forEncodedCount: input.count) == out.count else { return false }
        return decodeTable.withUnsafeBufferPointer { tableBuffer in
            guard let table = tableBuffer.baseAddress else { return false }
            guard var source = input.baseAddress, var target = out.baseAddress else { return input.isEmpty }
            let quadEnd = source + (input.count / 4) * 4
            var invalid: UInt32 = 0
            while source < quadEnd {
                let a = UInt32(table[Int(source[0])]), b = UInt32(table[Int(source[1])])
                let c = UInt32(table[Int(source[2])]), d = UInt32(table[Int(source[3])])
                invalid |= a | b | c | d
                let bits = a << 18 | b << 12 | c << 6 | d
                target[0] = UInt8(truncatingIfNeeded: bits >> 16)
                target[1] = UInt8(truncatingIfNeeded: bits >> 8)
                target[2] = UInt8(truncatingIfNeeded: bits)
                source += 4
                target += 3
            }
            if invalid & 0x80 != 0 { return false }
            switch input.count % 4 {
            case 0:
                return true
            case 2:
                let a = table[Int(source[0])], b = table[Int(source[1])]
                if (a | b) & 0x80 != 0 || b & 0x0F != 0 { return false }
                target[0] = a << 2 | b >> 4
                return true
            case 3:
                let a = table[Int(source[0])], b = table[Int(source[1])], c = table[Int(source[2])]
                if (a | b | c) & 0x80 != 0 || c & 0x03 != 0 { return false }
                target[0] = a << 2 | b >> 4
                target[1] = b << 4 | c >> 2
                return true
            default:
                return false
            }
        }
    }

    /// Decodes a canonical base64url string.
    static func decode(_ string: String) -> [UInt8]? {
        string.withUTF8InPlace { decode($0) }
    }

    /// Encodes bytes as unpadded base64url.
    static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        encodeAlphabet.withUnsafeBufferPointer { alphabet in
            var i = 0
            while i + 3 <= input.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                output.append(alphabet[Int(v >> 18 & 63)])
                output.append(alphabet[Int(v >> 12 & 63)])
                output.append(alphabet[Int(v >> 6 & 63)])
                output.append(alphabet[Int(v & 63)])
                i += 3
            }
            switch input.count - i {
            case 1:
                let v = UInt32(input[i]) << 16
                output.append(alphabet[Int(v >> 18 & 63)])
                output.append(alphabet[Int(v >> 12 & 63)])
            case 2:
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                output.append(alphabet[Int(v >> 18 & 63)])
                output.append(alphabet[Int(v >> 12 & 63)])
                output.append(alphabet[Int(v >> 6 & 63)])
            default:
                break
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
