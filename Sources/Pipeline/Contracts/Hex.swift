/// Lowercase hexadecimal encoding, the form digests take in contracts and logs.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Encodes `bytes` as lowercase hex, two characters per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
