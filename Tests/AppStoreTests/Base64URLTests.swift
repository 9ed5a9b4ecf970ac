import Testing
@_spi(Testing) @testable import AppStore

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == bytes)
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
    }

    @Test(arguments: [
        "QQ==",        // padding
        "QQ=",         // partial padding
        "a+b/",        // standard alphabet
        "ab c",        // whitespace
        "abc\n",       // newline
        "QR",          // non-zero trailing bits (canonical is "QQ")
        "QUJ",         // non-zero trailing bits (canonical is "QUI")
        "abcde",       // length 1 mod 4
        "ab%d",        // outside the alphabet
        "é",           // non-ASCII
    ])
    func rejectsNonCanonicalBase64URL(_ input: String) {
        #expect(Base64URL.decode(input) == nil)
    }

    @Test(arguments: ["QQ", "QUI", "QUJD", "-_-_", ""])
    func acceptsCanonicalBase64URL(_ input: String) {
        #expect(Base64URL.decode(input) != nil)
    }

    @Test(arguments: ["QQ", "QQ=", "QR==", "QUJ=", "Q===", "=QQQ", "QQ==QQ==", "ab-_", "QU I=", "QUJD\n"])
    func rejectsNonCanonicalStandardBase64(_ input: String) {
        #expect(Base64.decode(input) == nil)
    }

    @Test func derAndRawSignatureFormsConvert() {
        var raw = [UInt8](repeating: 0, count: 64)
        raw[0] = 0x80                      // r needs a leading zero in DER
        raw[63] = 0x01                     // s is 1: leading zeros stripped
        var der = [UInt8](repeating: 0, count: ES256.maxDERCount)
        let count = raw.withUnsafeBytes { rawBuffer in
            der.withUnsafeMutableBytes { ES256.derFromRaw(rawBuffer, into: $0) }
        }
        let encoded = Array(der.prefix(count))
        #expect(encoded.prefix(4) == [0x30, UInt8(count - 2), 0x02, 33])
        #expect(encoded.suffix(3) == [0x02, 0x01, 0x01])
        #expect(ES256.rawFromDER(encoded) == raw)
    }
}
