import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The bounded DER walker and the receipt date grammar.
@Suite struct ReceiptDERTests {
    @Test func readerEnforcesDepth() throws {
        var bytes: [UInt8] = [0x05, 0x00]
        for _ in 0..<20 { bytes = [0x30, UInt8(bytes.count)] + bytes }
        var reader = DERReader(bytes)
        var depth = 0
        #expect(throws: VerificationError.self) {
            while true {
                let element = try reader.next()
                reader = try reader.reader(over: element)
                depth += 1
            }
        }
        #expect(depth == DERReader.maxDepth)
    }

    @Test func readerDecodesIntegers() throws {
        func value(_ bytes: [UInt8]) throws -> Int64 {
            var reader = DERReader(bytes)
            return try reader.integer(try reader.next())
        }
        #expect(try value([0x02, 0x01, 0x00]) == 0)
        #expect(try value([0x02, 0x01, 0x7F]) == 127)
        #expect(try value([0x02, 0x02, 0x00, 0x80]) == 128)
        #expect(try value([0x02, 0x01, 0xFB]) == -5)
        #expect(try value([0x02, 0x07, 0x07, 0x1A, 0xFD, 0x50, 0xE7, 0x48, 0x2D]) == 2_000_000_123_357_229)
        #expect(try value([0x02, 0x08, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == Int64.max)
        for bad: [UInt8] in [[0x02, 0x00], [0x02, 0x02, 0x00, 0x01], [0x02, 0x02, 0xFF, 0x80],
                             [0x02, 0x09, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 0], [0x04, 0x01, 0x00]] {
            #expect(throws: VerificationError.self) { try value(bad) }
        }
        #expect(ReceiptAttribute(type: 1, version: 1, value: [0x02, 0x01, 0x05]).integerValue == 5)
        #expect(ReceiptAttribute(type: 1, version: 1, value: [0x02, 0x01, 0x05, 0x00]).integerValue == nil)
        #expect(ReceiptAttribute(type: 1, version: 1, value: [0x16, 0x02, 0x68, 0x69]).stringValue == "hi")
        #expect(ReceiptAttribute(type: 1, version: 1, value: [0x0C, 0x01, 0xFF]).stringValue == nil)
    }

    @Test func readerRejectsMalformedHeaders() {
        for bytes: [UInt8] in [[0x30], [0x1F, 0x01, 0x00], [0x30, 0x80, 0x00, 0x00], [0x30, 0x85, 1, 0, 0, 0, 0],
                               [0x30, 0x81, 0x10], [0x30, 0x82, 0x00, 0x90], [0x30, 0x02, 0x00]] {
            var reader = DERReader(bytes)
            #expect(throws: VerificationError.self) { try reader.next() }
        }
    }

    @Test func payloadGrammar() throws {
        func attribute(_ type: UInt8, _ value: [UInt8]) -> [UInt8] {
            let body: [UInt8] = [0x02, 0x01, type, 0x02, 0x01, 0x01, 0x04, UInt8(value.count)] + value
            return [0x30, UInt8(body.count)] + body
        }
        func set(_ items: [UInt8]) -> [UInt8] { [0x31, UInt8(items.count)] + items }
        let bundle = attribute(2, [0x0C, 0x03] + Array("app".utf8))
        #expect(try ReceiptPayloadParser.parse(set(bundle)).bundleId == "app")
        #expect(try ReceiptPayloadParser.parse([0x04, UInt8(set(bundle).count)] + set(bundle)).bundleId == "app")   // Xcode wrapper
        #expect(try ReceiptPayloadParser.parse(set([])).inAppPurchases.isEmpty)
        #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse(set(bundle) + [0x00]) }
        #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse(set(bundle + bundle)) }
        #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse([0x30, 0x00]) }
        #expect(throws: VerificationError(.invalidField, "receipt attribute 2 is not a string")) {
            try ReceiptPayloadParser.parse(set(attribute(2, [0x02, 0x01, 0x01])))
        }
        #expect(throws: VerificationError(.invalidDate, "receipt attribute 12 is not an RFC 3339 date")) {
            try ReceiptPayloadParser.parse(set(attribute(12, [0x16, 0x04] + Array("2025".utf8))))
        }
        // Unknown types are kept, even with values that are not DER at all.
        let unknown = try ReceiptPayloadParser.parse(set(attribute(77, [0xFF, 0xFF]) + bundle))
        #expect(unknown.otherAttributes == [ReceiptAttribute(type: 77, version: 1, value: [0xFF, 0xFF])])
        // A bundle id that is not UTF-8 is an invalid field.
        #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse(set(attribute(2, [0x0C, 0x01, 0xC3]))) }
        // In-app values must hold a SET.
        #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse(set(attribute(17, [0x02, 0x01, 0x00]))) }
    }

    @Test func dates() {
        func parse(_ text: String) -> Date? { ReceiptDate.parse(ArraySlice(Array(text.utf8))) }
        #expect(parse("2025-12-26T18:39:47Z") == Date(timeIntervalSince1970: 1_766_774_387))
        #expect(parse("2020-07-22T18:33:15+0100") == Date(timeIntervalSince1970: 1_595_439_195))
        #expect(parse("2020-07-22T18:33:15+01:00") == Date(timeIntervalSince1970: 1_595_439_195))
        #expect(parse("2020-07-22T16:33:15-01:00") == Date(timeIntervalSince1970: 1_595_439_195))
        #expect(parse("2024-02-29T00:00:00.5Z") == Date(timeIntervalSince1970: 1_709_164_800.5))
        #expect(parse("4001-01-01T00:00:00+0000") == Date(timeIntervalSince1970: 64_092_211_200))
        for bad in ["", "2025-12-26", "2025-12-26T18:39:47", "2025-12-26 18:39:47Z", "2025-13-01T00:00:00Z",
                    "2023-02-29T00:00:00Z", "2025-12-26T24:00:00Z", "2025-12-26T18:60:00Z", "2025-12-26T18:39:47z",
                    "2025-12-26T18:39:47.Z", "2025-12-26T18:39:47.1234567890Z", "2025-12-26T18:39:47+1", "2025-12-26T18:39:47+24:00",
                    "2025-12-26T18:39:47Z ", "+2025-12-26T18:39:47Z", "2025-1a-26T18:39:47Z"] {
            #expect(parse(bad) == nil, "\(bad)")
        }
    }
}
