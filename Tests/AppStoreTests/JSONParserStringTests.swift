import Foundation
import MutationTesting
import Testing
@testable import AppStore

/// ``JSONParser``'s block-at-a-time skip over plain string content (16 bytes, then 8, stopping at
/// the first byte that needs attention) against a byte-at-a-time reference of the RFC 8259 string
/// rules: the same string or the same refusal for seeded random strings that put quotes, escapes,
/// control characters and non-ASCII (valid and not) at every offset from the block boundaries.
@Suite struct JSONParserStringTests {
    /// What a string's raw bytes (between the quotes, unterminated if no closing quote) must give.
    static func reference(_ content: [UInt8]) -> String? {
        var output: [UInt8] = [], index = 0
        while index < content.count {
            let byte = content[index]
            if byte == UInt8(ascii: "\"") {  // the document may go on with whitespace only
                let rest = content[(index + 1)...]
                return rest.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) } ? String(validating: output, as: UTF8.self) : nil
            }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < content.count else { return nil }
                switch content[index + 1] {
                case UInt8(ascii: "\""): output.append(0x22)
                case UInt8(ascii: "\\"): output.append(0x5C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "/"): output.append(0x2F)
                default: return nil  // `\u` included: the generator writes no `u`
                }
                index += 2
                continue
            }
            output.append(byte)
            index += 1
        }
        return nil  // unterminated
    }

    @Test func stringsParseAsTheByteAtATimeRulesSay() {
        var generator = SeededGenerator(seed: 0x5_7215)
        let plain = Array("abcXYZ019 -_./:{}[],".utf8)
        let awkward: [[UInt8]] = [[0x22], [0x5C, 0x22], [0x5C, 0x5C], [0x5C, 0x6E], [0x5C, 0x74], [0x5C], [0x01], [0x1F], [0x7F],
                                  Array("é".utf8), Array("✓".utf8), [0xC3], [0xFF], [0x80], [0x00]]
        for _ in 0..<20_000 {
            // Sparse awkward bytes too, so long plain runs reach the 64-byte and 16-byte scans.
            let rarity = [8, 64, 512].randomElement(using: &generator)!
            var content: [UInt8] = []
            for _ in 0..<Int.random(in: 0...300, using: &generator) {
                if Int.random(in: 0..<rarity, using: &generator) == 0 {
                    content += awkward.randomElement(using: &generator)!
                } else {
                    content.append(plain.randomElement(using: &generator)!)
                }
            }
            if Bool.random(using: &generator) { content.append(0x22) }
            let document = [UInt8(ascii: "\"")] + content
            let parsed: String?
            if case .string(let string)? = try? JSONParser.parse(document, maxDepth: 4) { parsed = string } else { parsed = nil }
            #expect(parsed == Self.reference(content), "\(document)")
        }
    }
}
