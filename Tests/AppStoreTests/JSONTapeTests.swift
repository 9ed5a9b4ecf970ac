import MutationTesting
import Testing
@testable import AppStore

/// The tape against the parser it shortcuts: it never accepts what the parser refuses, what it
/// accepts reads back as the parser's tree, and it leaves to the parser only the documents its
/// description names.
@Suite struct JSONTapeTests {
    static let maxDepth = 8

    /// A document with every kind of value, nesting, escapes and non-ASCII text.
    static let seed = #"""
    {"schema":"receipt-verified/v1","submissionId":"sub-1","userId":"us\"er-ü","kind":"serverNotification",
     "count":3,"negative":-12,"ratio":1.5e3,"flag":true,"off":false,"none":null,"empty":{},"list":[1,"two",[],{"x":0}],
     "transaction":{"transactionId":"2000000000000002","originalTransactionId":"2000000000000001",
      "purchaseDate":"2026-11-30T06:00:00.123Z","notification":{"notificationType":"DID_RENEW","renewal":{"autoRenew":true}}}}
    """#

    /// The tape's verdict and reading of `bytes`, checked against the parser's.
    static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let parsed = try? JSONParser.parse(bytes, maxDepth: maxDepth)
        guard let tape = JSONTape(bytes, maxDepth: maxDepth) else {
            // Left to the parser: it refuses the bytes, or they hold what the tape does not take.
            if let parsed, !bytes.contains(where: { $0 == 0x5C || $0 >= 0x80 }) {
                #expect(largestObject(parsed) > JSONObject.indexThreshold,
                        "the tape refused a plain document the parser accepts: \(String(decoding: bytes, as: UTF8.self))",
                        sourceLocation: sourceLocation)
            }
            return
        }
        #expect(parsed != nil, "the tape accepted what the parser refuses: \(String(decoding: bytes, as: UTF8.self))",
                sourceLocation: sourceLocation)
        guard let parsed else { return }
        #expect(tape.value(at: tape.root) == parsed, sourceLocation: sourceLocation)
        if case .object(let object) = parsed {
            for name in object.keys + ["absent", "", "schem", "schemaa"] {
                #expect(tape.member(name, ofObjectAt: tape.root).map { tape.value(at: $0) } == object[name],
                        "member \(name)", sourceLocation: sourceLocation)
            }
        }
    }

    static func largestObject(_ value: JSONValue) -> Int {
        switch value {
        case .object(let object): object.keys.map { largestObject(object[$0]!) }.reduce(object.count, max)
        case .array(let elements): elements.map(largestObject).reduce(0, max)
        default: 0
        }
    }

    @Test func readsTheSeedAsTheParserDoes() throws {
        let bytes = Array(Self.seed.utf8)
        Self.check(bytes)
        let tape = try #require(JSONTape(bytes, maxDepth: Self.maxDepth))
        let transaction = try #require(tape.member("transaction", ofObjectAt: tape.root))
        #expect(tape.isObject(at: transaction))
        let date = try #require(tape.member("purchaseDate", ofObjectAt: transaction))
        #expect(tape.withUTF8(ofStringAt: date) { String(decoding: $0, as: UTF8.self) } == "2026-11-30T06:00:00.123Z")
        let user = try #require(tape.member("userId", ofObjectAt: tape.root))
        #expect(tape.withUTF8(ofStringAt: user) { String(decoding: $0, as: UTF8.self) } == "us\"er-ü")
        #expect(tape.withUTF8(ofStringAt: transaction) { _ in 0 } == nil)
        #expect(tape.isNull(at: try #require(tape.member("none", ofObjectAt: tape.root))))
        #expect(tape.member("transactionId", ofObjectAt: tape.root) == nil, "a nested member is not the root's")
        #expect(tape.member("x", ofObjectAt: user) == nil, "a string has no members")
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "'a'", "01", "-", "1.", ".5", "+1", "1e", "1e+",
        "NaN", "Infinity", "tru", "nul", "[1 2]", "{\"a\":1}x", "\u{FEFF}{}", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"",
        "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\u{01}\"", "\"unterminated", "// c\n{}", "1e400",
        #"{"a":1,"a":2}"#, #"{"a":1,"b":{"c":1,"c":1}}"#, #"[{"x":null,"x":null}]"#, "[[[[[[[[[1]]]]]]]]]",
        #"{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{}}}}}}}}}"#,
    ])
    func refusesWhatTheParserRefuses(_ text: String) {
        #expect(JSONTape(Array(text.utf8), maxDepth: Self.maxDepth) == nil)
        Self.check(Array(text.utf8))
    }

    @Test func refusesInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]] {
            #expect(JSONTape(bytes, maxDepth: 4) == nil)
        }
    }

    /// Valid documents the tape leaves to the parser: names compared by canonical equivalence
    /// (an escape, a non-ASCII byte: `"\u212A"`, KELVIN SIGN, equals `"K"` as a Swift `String`),
    /// and objects past the parser's indexing threshold.
    @Test func leavesEscapedAndNonASCIINamesAndLargeObjectsToTheParser() throws {
        let wide = "{" + (0...JSONObject.indexThreshold).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}"
        for text in [#"{"\u0061":1}"#, "{\"\u{212A}\":1}", #"{"K":1,"\u212A":2}"#, wide] {
            #expect(JSONTape(Array(text.utf8), maxDepth: Self.maxDepth) == nil, "\(text)")
            _ = try JSONParser.parse(Array(text.utf8), maxDepth: Self.maxDepth)
        }
        let fits = "{" + (1...JSONObject.indexThreshold).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}"
        Self.check(Array(fits.utf8))
        #expect(JSONTape(Array(fits.utf8), maxDepth: Self.maxDepth) != nil)
    }

    /// A reader may raise the member limit (the harness's tally reads 30-member entitlement
    /// changes): the tape then reads the object as the parser does, and still finds a duplicate
    /// name past the default threshold, which the parser refuses too.
    @Test func aRaisedMemberLimitReadsLargeObjectsAndFindsTheirDuplicates() throws {
        let names = (0..<40).map { "\"m\($0)\":\($0)" }
        let wide = Array(("{" + names.joined(separator: ",") + "}").utf8)
        #expect(JSONTape(wide, maxDepth: Self.maxDepth) == nil)
        let tape = try #require(JSONTape(wide, maxDepth: Self.maxDepth, maxMembers: 64))
        #expect(tape.value(at: tape.root) == (try JSONParser.parse(wide, maxDepth: Self.maxDepth)))
        #expect(tape.member("m39", ofObjectAt: tape.root).map { tape.value(at: $0) } == .integer(39))
        #expect(JSONTape(wide, maxDepth: Self.maxDepth, maxMembers: 40) != nil)
        #expect(JSONTape(wide, maxDepth: Self.maxDepth, maxMembers: 39) == nil)
        let duplicated = Array(("{" + (names + [#""m3":0"#]).joined(separator: ",") + "}").utf8)
        #expect(JSONTape(duplicated, maxDepth: Self.maxDepth, maxMembers: 64) == nil)
        #expect(throws: VerificationError.self) { try JSONParser.parse(duplicated, maxDepth: Self.maxDepth) }
    }

    /// Thousands of damaged copies of the seed (bytes replaced by JSON's structural characters,
    /// removed, repeated): wherever the tape decides, it decides as the parser does.
    @Test func agreesWithTheParserOnDamagedDocuments() {
        let seed = Array(Self.seed.utf8)
        let alphabet = Array(#"{}[]:,"\ 0123456789-+.eEtrufalsn"#.utf8) + [0x0A, 0x01, 0x80, 0xC3, 0xBC]
        var random = SeededGenerator(seed: 0x7A9E)
        var taped = 0
        for round in 0..<6_000 {
            var bytes = seed
            for _ in 0...(round % 3) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: at)
                default:
                    let length = min(Int(random.next() % 24) + 1, bytes.count - at)
                    bytes.insert(contentsOf: bytes[at..<(at + length)], at: at)
                }
            }
            if JSONTape(bytes, maxDepth: Self.maxDepth) != nil { taped += 1 }
            Self.check(bytes)
        }
        #expect(taped > 100, "the damage left too few valid documents to compare (\(taped))")
    }
}
