import Foundation
import MutationTesting
import Testing
@testable import Pipeline

/// The table-driven, in-place JWS check and base64url decoder against the implementations they
/// replaced (kept below as the reference, with the canonical-encoding rule added written the
/// obvious way): the same answer, problem text included, for seeded random and adversarial inputs
/// and for every short base64 string.
@Suite struct PayloadNormaliserTests {
    /// The previous implementation, verbatim in behaviour but for the canonical-encoding rule.
    enum Reference {
        static func normaliseJWS(_ payload: String) -> Result<String, PayloadNormaliser.PayloadProblem> {
            let trimmed = trimASCIIWhitespace(payload)
            guard !trimmed.isEmpty else { return .failure(.empty) }
            return checkJWS(trimmed)
        }

        static func checkJWS(_ text: String) -> Result<String, PayloadNormaliser.PayloadProblem> {
            var contiguous = text
            let problem = contiguous.withUTF8 { bytes -> PayloadNormaliser.PayloadProblem? in
                var bounds: [Range<Int>] = []
                var start = 0
                for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: ".") {
                    bounds.append(start..<index)
                    start = index + 1
                    if bounds.count > 3 { break }
                }
                guard bounds.count == 3 else {
                    let segments = bounds.count > 3 ? bytes.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) } : bounds.count
                    return .malformed("JWS must have three dot-separated segments, found \(segments)")
                }
                for (index, range) in bounds.enumerated() {
                    guard !range.isEmpty else { return .malformed("JWS segment \(index + 1) is empty") }
                    for position in range where !isBase64URLByte(bytes[position]) {
                        return .malformed("JWS segment \(index + 1) is not base64url")
                    }
                    guard range.count % 4 != 1 else {
                        return .malformed("JWS segment \(index + 1) has an impossible base64url length")
                    }
                    // Canonical: what the segment decodes to encodes back to the segment.
                    let segment = Array(bytes[range])
                    guard let decoded = decodeBase64URL(segment), encodeBase64URL(decoded) == segment else {
                        return .malformed("JWS segment \(index + 1) is not canonical base64url")
                    }
                }
                guard let header = decodeBase64URL(Array(bytes[bounds[0]])),
                      header.first(where: { !PayloadNormaliser.isASCIIWhitespace($0) }) == UInt8(ascii: "{") else {
                    return .malformed("JWS header does not decode to a JSON object")
                }
                return nil
            }
            if let problem { return .failure(problem) }
            return .success(text)
        }

        static func decodeBase64URL(_ segment: [UInt8]) -> [UInt8]? {
            var standard = segment.map { byte -> UInt8 in
                switch byte {
                case UInt8(ascii: "-"): UInt8(ascii: "+")
                case UInt8(ascii: "_"): UInt8(ascii: "/")
                default: byte
                }
            }
            while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
            return Data(base64Encoded: Data(standard)).map { Array($0) }
        }

        static func encodeBase64URL(_ bytes: [UInt8]) -> [UInt8] {
            Data(bytes).base64EncodedString().utf8.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                case UInt8(ascii: "="): nil
                default: byte
                }
            }
        }

        static func trimASCIIWhitespace(_ text: String) -> String {
            let bytes = Array(text.utf8)
            guard let first = bytes.firstIndex(where: { !PayloadNormaliser.isASCIIWhitespace($0) }),
                  let last = bytes.lastIndex(where: { !PayloadNormaliser.isASCIIWhitespace($0) }) else { return "" }
            if first == 0 && last == bytes.count - 1 { return text }
            return String(decoding: bytes[first...last], as: UTF8.self)
        }

        static func isBase64URLByte(_ byte: UInt8) -> Bool {
            PayloadNormaliser.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    static func expectSame(_ payload: String) {
        for kind in [SubmissionKind.signedTransaction, .signedRenewalInfo, .serverNotification] {
            let ours = PayloadNormaliser.normalise(payload, kind: kind, maxTransactionIdDigits: 20)
            #expect(ours == Reference.normaliseJWS(payload), "\(payload.debugDescription)")
        }
        #expect(PayloadNormaliser.trimASCIIWhitespace(payload) == Reference.trimASCIIWhitespace(payload))
    }

    static func expectSameDecoding(_ bytes: [UInt8]) {
        #expect(PayloadNormaliser.decodeBase64URL(bytes) == Reference.decodeBase64URL(bytes),
                "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
    }

    static let base64URL = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Bytes that stress the checks: both alphabets' extras, padding, dots, whitespace, `{`, NUL,
    /// a control character and the bytes of a non-ASCII character.
    static let awkward: [UInt8] = Array("+/=. \n\t\r{".utf8) + [0, 0x1F, 0x7F] + Array("é".utf8)

    /// A header segment that decodes to `text`.
    static func header(_ text: String) -> String { Fixtures.base64URL(text) }

    @Test func adversarialJWSPayloadsAreJudgedAsBefore() {
        let body = Fixtures.base64URL(#"{"transactionId":"1"}"#), signature = Fixtures.base64URL("sig")
        var payloads = [Fixtures.jws, " \n\(Fixtures.jws)\t", "", " ", ".", "..", "...", "a.b", "a.b.c.d", "a..b.c", "....x"]
        for head in ["{}", " \n\t\r{", "    {", "  ", " ", "[", "\u{0B}{", "\0{", "é{", String(repeating: " ", count: 40) + "{",
                     String(repeating: " ", count: 41), "x{"] {
            payloads.append("\(Self.header(head)).\(body).\(signature)")
        }
        for segment in ["", "A", "AB", "ABC", "ABCD", "ABCDE", "e30", "e30=", "e3+", "e3/", "e3 0", "e30é"] {
            payloads += ["\(segment).\(body).\(signature)", "e30.\(segment).\(signature)", "e30.\(body).\(segment)"]
        }
        // Non-canonical trailing bits in each segment (Foundation ignores them; the verifier does not).
        payloads += ["e31.\(body).\(signature)", "e3z.\(body).\(signature)", "ez.\(body).\(signature)", "IH.\(body).\(signature)",
                     "e30.e31.\(signature)", "e30.\(body).c2k", "e30.\(body).c2l", "e30.\(body).ez", "e30.\(body).eh"]
        for payload in payloads { Self.expectSame(payload) }
    }

    @Test func seededRandomPayloadsAreJudgedAsBefore() {
        var generator = SeededGenerator(seed: 0x0B64_0001)
        let valid = Array(Fixtures.jws.utf8)
        for _ in 0..<20_000 {
            var bytes: [UInt8]
            if Bool.random(using: &generator) {
                bytes = valid
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let position = Int.random(in: 0..<bytes.count, using: &generator)
                    let byte = Bool.random(using: &generator) ? Self.awkward.randomElement(using: &generator)!
                        : Self.base64URL.randomElement(using: &generator)!
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[position] = byte
                    case 1: bytes.insert(byte, at: position)
                    default: bytes.remove(at: position)
                    }
                    if bytes.isEmpty { bytes = [byte] }
                }
            } else {
                let alphabet = Self.base64URL + Self.awkward + Array("...".utf8)
                bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            }
            let payload = String(decoding: bytes, as: UTF8.self)
            Self.expectSame(payload)
            Self.expectSameDecoding(bytes)
        }
    }

    @Test func everyShortBase64StringDecodesAsBefore() {
        let alphabet = Self.base64URL + Array("+/=. é".utf8)
        Self.expectSameDecoding([])
        for a in alphabet {
            Self.expectSameDecoding([a])
            for b in alphabet {
                Self.expectSameDecoding([a, b])
                for c in [UInt8(ascii: "A"), UInt8(ascii: "Q"), UInt8(ascii: "z"), UInt8(ascii: "_"), UInt8(ascii: "="),
                          UInt8(ascii: "+")] {
                    Self.expectSameDecoding([a, b, c])
                    Self.expectSameDecoding([UInt8(ascii: "e"), a, b, c])
                    Self.expectSameDecoding(Array("eyJh".utf8) + [a, b, c])
                }
            }
        }
    }

    @Test func longSegmentsDecodeAsBefore() {
        var generator = SeededGenerator(seed: 0x0B64_0002)
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in Self.base64URL.randomElement(using: &generator)! }
            Self.expectSameDecoding(bytes)
        }
    }
}
