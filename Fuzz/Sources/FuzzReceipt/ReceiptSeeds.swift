import Foundation
@_spi(Fuzzing) import AppStore
import FuzzSupport

/// The seeds of `FuzzReceipt`: every fixture receipt's DER (envelopes), its signed content
/// (payloads for the walker), hand-built payloads for the grammar's edges, and base64 text.
func receiptSeeds() -> [FuzzSeed] {
    var seeds: [FuzzSeed] = []
    var payloads: [FuzzSeed] = []
    for (name, text) in FuzzReceiptVerifier.allReceipts {
        guard let der = Data(base64Encoded: text).map(Array.init), der.count <= 8192 else { continue }
        seeds.append(FuzzSeed("envelope-\(name)", der))
        if let payload = FuzzingEntryPoints.receiptPayload(ofEnvelope: der) {
            payloads.append(FuzzSeed("payload-\(name)", payload))
        }
    }
    seeds += payloads
    seeds += PayloadSamples.edgeCases.map { FuzzSeed("payload-edge-\($0.name)", $0.bytes) }
    if let small = FuzzFixtures.receiptFixtures.first(where: { $0.name == "certs-only" }) {
        seeds.append(FuzzSeed("text-cli-certs-only", text: small.text))
    }
    let texts = ["AQID", "AQI=", "AQ==", "AQ=", "AQ", "AR==", "AQJ=", "AQ==AQ==", "AQ==\n", " AQ==", "A+/_", "MA=="]
    seeds += texts.enumerated().map { FuzzSeed("text-edge-\($0.offset)", text: $0.element) }
    return seeds
}

/// Hand-built receipt payloads (DER) at the edges of the grammar ``ReceiptPayloadParser`` reads.
enum PayloadSamples {
    /// An element with a definite, minimal length.
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        var remaining = content.count
        while remaining > 0 {
            length.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        let header = content.count < 0x80 ? [UInt8(content.count)] : [0x80 | UInt8(length.count)] + length
        return [tag] + header + content
    }

    /// A minimal two's-complement INTEGER.
    static func integer(_ value: Int64) -> [UInt8] {
        var octets = withUnsafeBytes(of: value.bigEndian, Array.init)
        while octets.count > 1 && ((octets[0] == 0 && octets[1] & 0x80 == 0) || (octets[0] == 0xFF && octets[1] & 0x80 != 0)) {
            octets.removeFirst()
        }
        return element(0x02, octets)
    }

    static func attribute(_ type: Int64, _ value: [UInt8], version: Int64 = 1) -> [UInt8] {
        element(0x30, integer(type) + integer(version) + element(0x04, value))
    }

    static func utf8(_ text: String) -> [UInt8] { element(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { element(0x16, Array(text.utf8)) }
    static func set(_ attributes: [[UInt8]]) -> [UInt8] { element(0x31, attributes.flatMap { $0 }) }

    /// One purchase with every named in-app attribute.
    static let purchase: [UInt8] = set([
        attribute(1701, integer(1)), attribute(1702, utf8("com.example.receipts.coins")),
        attribute(1703, utf8("2000000000000002")), attribute(1704, ia5("2025-01-01T00:00:00Z")),
        attribute(1705, utf8("2000000000000001")), attribute(1706, ia5("2024-12-01T00:00:00.5Z")),
        attribute(1707, integer(2)), attribute(1708, ia5("2025-02-01T00:00:00+01:00")),
        attribute(1711, integer(2_000_000_000_000_003)), attribute(1712, ia5("")),
        attribute(1713, integer(0)), attribute(1719, integer(1)), attribute(1721, utf8("intro")),
        attribute(1710, [0xFF]),
    ])

    static let receiptAttributes: [[UInt8]] = [
        attribute(0, utf8("ProductionSandbox")), attribute(2, utf8("com.example.receipts")),
        attribute(3, utf8("42")), attribute(4, [0x01, 0x02, 0x03, 0x04], version: 2),
        attribute(5, [UInt8](repeating: 0xAB, count: 20)), attribute(12, ia5("2025-01-01T00:00:00Z")),
        attribute(17, purchase), attribute(18, ia5("2020-07-22T18:33:15+0100")),
        attribute(19, utf8("1.0")), attribute(21, ia5("2028-02-29T23:59:60Z")), attribute(77, [0x05, 0x00]),
    ]

    /// Named edge cases: accepted forms and one rejection of each kind.
    static var edgeCases: [(name: String, bytes: [UInt8])] {
        let full = set(receiptAttributes)
        var deep = element(0x05, [])
        for _ in 0..<9 { deep = element(0x31, deep) }
        return [
            ("full", full),
            ("xcode-octet-wrapper", element(0x04, full)),
            ("empty-set", set([])),
            ("long-product-id", set([attribute(17, set([attribute(1702, utf8(String(repeating: "p", count: 300)))]))])),
            ("printable-string", set([attribute(2, element(0x13, Array("com.example".utf8)))])),
            ("wide-integers", set([attribute(17, set([attribute(1711, integer(.max)), attribute(1701, integer(.min))]))])),
            ("negative-type", set([attribute(-1, utf8("x"))])),
            ("duplicate-bundle-id", set([attribute(2, utf8("a")), attribute(2, utf8("b"))])),
            ("duplicate-in-app-field", set([attribute(17, set([attribute(1703, utf8("1")), attribute(1703, utf8("2"))]))])),
            ("bundle-id-integer", set([attribute(2, integer(42))])),
            ("invalid-date", set([attribute(12, ia5("2025-02-29T00:00:00Z"))])),
            ("not-utf8", set([attribute(2, element(0x0C, [0xC3, 0x28]))])),
            ("in-app-not-a-set", set([attribute(17, integer(0))])),
            ("trailing-bytes", full + [0x00]),
            ("too-deep", deep),
            ("indefinite-length", [0x31, 0x80] + receiptAttributes[1] + [0x00, 0x00]),
            ("non-minimal-length", [0x31, 0x81, 0x05] + [0x30, 0x03, 0x02, 0x01, 0x00]),
        ]
    }
}
