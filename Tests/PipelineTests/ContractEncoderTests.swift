import Foundation
import Testing
@testable import Pipeline

/// ContractJSONEncoder must write exactly the bytes Foundation's JSONEncoder writes with
/// `[.sortedKeys, .withoutEscapingSlashes]`, for every contract and for the awkward scalars.
@Suite struct ContractEncoderTests {
    static func foundation<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    static func expectSame<T: Encodable>(_ value: T, _ comment: Comment? = nil) throws {
        let ours = try ContractJSONEncoder.encode(value)
        let theirs = try foundation(value)
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: theirs, as: UTF8.self), comment)
    }

    @Test func everyContractSampleEncodesAsFoundationDoes() async throws {
        let samples = try await ContractSamples.make()
        var count = 0
        for value in samples.ingested { try Self.expectSame(value); count += 1 }
        for value in samples.verified { try Self.expectSame(value); count += 1 }
        for value in samples.rejected { try Self.expectSame(value); count += 1 }
        for value in samples.outcomes { try Self.expectSame(value); count += 1 }
        for value in samples.changes { try Self.expectSame(value); count += 1 }
        for value in samples.ownerUpdates { try Self.expectSame(value); count += 1 }
        for value in samples.states { try Self.expectSame(value); count += 1 }
        #expect(count > 50)
    }

    struct Scalars: Encodable {
        var text: String
        var number: Double
        var integer: Int64
        var flag: Bool
        var missing: String?
        var list: [String]
        var nested: [String: Int]
        var data: Data
    }

    @Test(arguments: [
        "plain", "", "quote \" backslash \\ slash / tab \t newline \n return \r", "\u{01}\u{1f}\u{08}\u{0c}",
        "ünïcødé ✓ 🎮", "\u{2028}\u{2029}", "key with spaces",
    ])
    func stringsAndEscapes(_ text: String) throws {
        try Self.expectSame(Scalars(text: text, number: 1, integer: -7, flag: true, missing: nil, list: [text, "b"],
                                    nested: [text: 1, "a": 2], data: Data(text.utf8)))
    }

    /// The writer skips eight bytes at a time while none needs escaping: each escaped character at
    /// every position of a long string, within and after the eight-byte words.
    @Test(arguments: ["\"", "\\", "\u{00}", "\u{01}", "\n", "\u{1f}", "\u{7f}", "é", " ", "!", "#", "[", "]"])
    func escapesAtEveryPositionOfLongStrings(_ special: String) throws {
        for length in [8, 15, 16, 41] {
            for position in 0..<length {
                var characters = Array(repeating: "a", count: length)
                characters[position] = special
                let text = characters.joined()
                #expect(try ContractJSONEncoder.encode([text]) == ContractEncoderTests.foundation([text]), "\(length)/\(position)")
            }
        }
    }

    /// Past the writer's first buffer (1,024 bytes on this path): an output that makes it grow
    /// several times, with escapes and multi-byte characters across every growth point.
    @Test func anOutputLongerThanTheFirstBufferIsWrittenWhole() throws {
        let text = String(repeating: "abc\"d\\e\u{01}fé🎮/", count: 700)
        try Self.expectSame(Scalars(text: text, number: 2.5, integer: Int64.min, flag: true, missing: nil,
                                    list: Array(repeating: text, count: 3), nested: [text: 1, "k": 2], data: Data(text.utf8)))
    }

    @Test(arguments: [0, 1, -1, 2.5, 0.1, 1.0 / 3, 123_456_789.125, 1e15, 1e20, -2e-7, 9_007_199_254_740_993])
    func doubles(_ number: Double) throws {
        try Self.expectSame(Scalars(text: "x", number: number, integer: Int64.max, flag: false, missing: "m", list: [],
                                    nested: [:], data: Data()))
    }

    @Test func aNonFiniteDoubleIsAnEncodingError() {
        #expect(throws: EncodingError.self) {
            _ = try ContractJSONEncoder.encode(Scalars(text: "", number: .nan, integer: 0, flag: true, missing: nil,
                                                       list: [], nested: [:], data: Data()))
        }
    }
}
