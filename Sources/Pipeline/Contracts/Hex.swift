/// Lowercase hexadecimal encoding, the form digests take in contracts and logs.
public enum Hex {
    /// The lowercase hex digit of a nibble (0...15).
    static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble
    }

    /// Encodes `bytes` as lowercase hex, two characters per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte & 0x0f))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
