/// Minimal PEM reader for `CERTIFICATE` blocks (RFC 7468, strict base64 body; line breaks and
/// spaces between base64 characters are allowed, nothing else).
enum PEMDocument {
    private static let begin = Array("-----BEGIN CERTIFICATE-----".utf8)
    private static let end = Array("-----END CERTIFICATE-----".utf8)
    private static let anyBegin = Array("-----BEGIN ".utf8)

    /// Whether the bytes contain a PEM boundary (otherwise they are treated as DER).
    static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        firstIndex(of: anyBegin, in: bytes, from: 0) != nil
    }

    /// The DER bytes of every `CERTIFICATE` block, in order. Other block types are skipped.
    /// - Throws: ``X509CertificateError`` (`invalid-pem`) for an unterminated block or a bad body.
    static func certificateBlocks(in bytes: [UInt8]) throws -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        var cursor = 0
        while let start = firstIndex(of: begin, in: bytes, from: cursor) {
            let bodyStart = start + begin.count
            guard let stop = firstIndex(of: end, in: bytes, from: bodyStart) else {
                throw X509CertificateError.invalidPEM("unterminated CERTIFICATE block")
            }
            let body = bytes[bodyStart..<stop].filter { !($0 == 0x0A || $0 == 0x0D || $0 == 0x20 || $0 == 0x09) }
            guard let der = body.withUnsafeBufferPointer({ Base64.decode($0) }), !der.isEmpty else {
                throw X509CertificateError.invalidPEM("CERTIFICATE block is not valid base64")
            }
            blocks.append(der)
            cursor = stop + end.count
        }
        return blocks
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
