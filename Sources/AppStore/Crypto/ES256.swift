/// Conversions between the JOSE ES256 signature form (`r‖s`, 32 bytes each, RFC 7518 §3.4) and
/// the DER `ECDSA-Sig-Value` OpenSSL expects.
enum ES256 {
    /// Size of a JOSE ES256 signature.
    static let rawSignatureCount = 64

    /// Largest DER form of a P-256 signature: 2 + 2 × (2 + 33).
    static let maxDERCount = 72

    /// Writes the DER `SEQUENCE { INTEGER r, INTEGER s }` for a 64-byte `r‖s` into `output`.
    /// - Returns: The number of bytes written (at most ``maxDERCount``).
    static func derFromRaw(_ raw: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(raw.count == rawSignatureCount && output.count >= maxDERCount)
        var position = 2
        for half in 0..<2 {
            let offset = half * 32
            var start = 0
            while start < 31 && raw[offset + start] == 0 { start += 1 }
            let needsPad = raw[offset + start] & 0x80 != 0
            let length = 32 - start + (needsPad ? 1 : 0)
            output[position] = 0x02
            output[position + 1] = UInt8(length)
            position += 2
            if needsPad {
                output[position] = 0
                position += 1
            }
            for index in start..<32 {
                output[position] = raw[offset + index]
                position += 1
            }
        }
        output[0] = 0x30
        output[1] = UInt8(position - 2)
        return position
    }

    /// Converts a DER `ECDSA-Sig-Value` to 64-byte `r‖s`.
    /// - Returns: `nil` when the DER is malformed or an integer does not fit in 32 bytes.
    static func rawFromDER(_ der: [UInt8]) -> [UInt8]? {
        guard der.count >= 8, der[0] == 0x30, Int(der[1]) == der.count - 2, der[1] < 0x80 else { return nil }
        var raw = [UInt8](repeating: 0, count: rawSignatureCount)
        var position = 2
        for half in 0..<2 {
            guard position + 2 <= der.count, der[position] == 0x02 else { return nil }
            let length = Int(der[position + 1])
            position += 2
            guard length >= 1, length <= 33, position + length <= der.count else { return nil }
            var integer = Array(der[position..<(position + length)])
            position += length
            while integer.count > 32 && integer[0] == 0 { integer.removeFirst() }
            guard integer.count <= 32 else { return nil }
            raw.replaceSubrange((half * 32 + 32 - integer.count)..<(half * 32 + 32), with: integer)
        }
        return position == der.count ? raw : nil
    }
}
