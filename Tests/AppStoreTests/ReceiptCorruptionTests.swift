import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Damaged and hostile inputs are rejected with a reason code and never crash: truncation, bit
/// flips (signature, content, certificates, everywhere), bad base64, non-PKCS#7 input, huge
/// lengths and deep nesting, at the envelope (OpenSSL) and payload (DER walker) levels.
@Suite struct ReceiptCorruptionTests {
    static let codes: Set<String> = ["invalid-base64", "invalid-receipt", "receipt-signature-invalid", "untrusted-root",
                                     "invalid-chain", "missing-apple-oid", "invalid-certificate", "certificate-expired",
                                     "certificate-not-yet-valid", "invalid-field", "invalid-date", "missing-field", "too-large"]

    func verify(_ der: [UInt8], _ verifier: AppReceiptVerifier) -> String {
        verifier.verifyAndDecodeAppReceipt(receiptBase64(der)).receiptCode
    }

    @Test func truncationIsRejected() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let der = try receiptDER(try ReceiptVectors.fixture("valid"))
        for length in [0, 1, 2, 4, 16, 100, der.count / 2, der.count - 300, der.count - 1] {
            let code = verify(Array(der.prefix(length)), verifier)
            #expect(code == "invalid-receipt", "prefix \(length): \(code)")
        }
        #expect(verify(der + [0], verifier) == "invalid-receipt")        // trailing byte
        #expect(verify(der + der, verifier) == "invalid-receipt")
    }

    @Test func signatureAndContentFlipsAreRejected() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let der = try receiptDER(try ReceiptVectors.fixture("valid"))
        #expect(verify(der, verifier) == "valid")
        // The RSA-2048 signature is the last 256 bytes (no unsigned attributes).
        for offset in [1, 100, 255] {
            var flipped = der
            flipped[der.count - offset] ^= 0x01
            #expect(verify(flipped, verifier) == "receipt-signature-invalid")
        }
        let content = try #require(receiptIndex(of: Array("com.example.receipts".utf8), in: der))
        for offset in [0, 7, 19] {
            var flipped = der
            flipped[content + offset] ^= 0x20
            #expect(verify(flipped, verifier) == "receipt-signature-invalid")
        }
        var product = der
        let productIndex = try #require(receiptIndex(of: Array("coins".utf8), in: der))
        product[productIndex] = UInt8(ascii: "g")
        #expect(verify(product, verifier) == "receipt-signature-invalid")
    }

    /// Flipping any bit of the signed content, the signature, the leaf or the intermediate never
    /// yields a valid receipt; flipping anything anywhere never crashes and gives a known code.
    @Test func bitFlipSweep() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let der = try receiptDER(try ReceiptVectors.fixture("valid"))
        let container = try PKCS7Container(der: der, maxCertificates: 8)
        let leaf = try #require(receiptIndex(of: container.certificateDER(at: container.signerIndex), in: der))
        let root = try ReceiptVectors.testRoot().derBytes
        var protected: [Range<Int>] = [(der.count - 256)..<der.count]          // the signature
        let content = try #require(receiptIndex(of: container.content, in: der))
        protected.append(content..<(content + container.content.count))
        for index in 0..<container.certificateCount where container.certificateDER(at: index) != root {
            let certificate = container.certificateDER(at: index)                 // leaf and intermediate
            let start = try #require(receiptIndex(of: certificate, in: der))
            protected.append(start..<(start + certificate.count))
        }
        #expect(protected.contains { $0.contains(leaf) })
        var rejected = 0
        for position in stride(from: 0, to: der.count, by: 3) {
            for bit: UInt8 in [0x01, 0x80] {
                var flipped = der
                flipped[position] ^= bit
                let code = verify(flipped, verifier)
                if protected.contains(where: { $0.contains(position) }) {
                    #expect(code != "valid", "flip at \(position)")
                }
                #expect(code == "valid" || Self.codes.contains(code), "flip at \(position): \(code)")
                if code != "valid" { rejected += 1 }
            }
        }
        #expect(rejected > 0)
    }

    @Test func badBase64IsRejected() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let valid = try ReceiptVectors.fixture("valid")
        for input in ["MII", "MIIB====", "!!!!", valid + "\n", "\(valid.prefix(64))\n\(valid.dropFirst(64))", " " + valid,
                      valid.replacingOccurrences(of: "+", with: "-"), String(valid.dropLast()), valid.replacingOccurrences(of: "=", with: "")] {
            let code = verifier.verifyAndDecodeAppReceipt(input).receiptCode
            #expect(code == "invalid-base64", "\(input.prefix(12))…: \(code)")
        }
        #expect(verifier.verifyAndDecodeAppReceipt("").receiptCode == "invalid-receipt")
        let tooLarge = try ReceiptVectors.testVerifier { $0.limits.maxReceiptBytes = 1024 }
        #expect(tooLarge.verifyAndDecodeAppReceipt(valid).receiptCode == "too-large")
        #expect(throws: VerificationError.self) { try ReceiptUtility.extractTransactionIds(appReceipt: String(valid.dropLast())) }
    }

    @Test func nonPKCS7InputIsRejected() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let inputs: [[UInt8]] = [
            try ReceiptVectors.testRoot().derBytes,                       // a certificate
            Array(#"{"receipt":"MIIT"}"#.utf8),                            // JSON
            [0x30, 0x00],                                                  // empty SEQUENCE
            [0x30, 0x0B, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01],   // id-data without content
            [0x05, 0x00],                                                  // NULL
            Array(repeating: 0xFF, count: 64),
        ]
        for input in inputs {
            #expect(verify(input, verifier) == "invalid-receipt", "\(input.prefix(4))")
        }
    }

    /// A receipt padded with copies of its certificates (ingest lets 256 KB through) is refused
    /// from the DER structure alone, before OpenSSL parses any certificate or a chain is built.
    @Test func paddedCertificateListIsRefusedBeforeParsing() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let der = try receiptDER(try ReceiptVectors.fixture("valid"))
        let padded = try Self.replacingCertificates(of: der) { certificates in
            Array(repeating: certificates, count: 40).flatMap { $0 }
        }
        let result = verifier.verifyAndDecodeAppReceipt(receiptBase64(padded))
        #expect(result.receiptCode == "invalid-receipt")
        #expect(verifier.cacheStatistics.builds == 0, "no chain was built for the padded receipt")
        // The same certificates once each still verify: the count, not the shape, was refused.
        let same = try Self.replacingCertificates(of: der) { $0 }
        #expect(verifier.verifyAndDecodeAppReceipt(receiptBase64(same)).receiptCode == "valid")
    }

    /// Rebuilds a DER receipt with its SignedData `certificates` contents replaced by `transform`'s.
    static func replacingCertificates(of der: [UInt8], _ transform: ([UInt8]) -> [UInt8]) throws -> [UInt8] {
        var top = DERReader(der)
        let contentInfo = try top.next(tag: DERReader.Tag.sequence, "ContentInfo")
        var outer = try top.reader(over: contentInfo)
        let contentType = try outer.next(tag: 0x06, "contentType")
        let explicit = try outer.next(tag: 0xA0, "content")
        var wrapper = try outer.reader(over: explicit)
        let signedData = try wrapper.next(tag: DERReader.Tag.sequence, "SignedData")
        var fields = try wrapper.reader(over: signedData)
        var rebuilt: [UInt8] = []
        var index = 0
        while !fields.isAtEnd {
            let field = try fields.next()
            if index >= 3 && field.tag == 0xA0 {
                let contents = transform(Array(fields.contents(of: field)))
                rebuilt += DERReader.header(tag: 0xA0, count: contents.count) + contents
            } else {
                rebuilt += fields.encoding(of: field)
            }
            index += 1
        }
        let signed = DERReader.header(tag: DERReader.Tag.sequence, count: rebuilt.count) + rebuilt
        let body = Array(outer.encoding(of: contentType)) + DERReader.header(tag: 0xA0, count: signed.count) + signed
        return DERReader.header(tag: DERReader.Tag.sequence, count: body.count) + body
    }

    @Test func hugeLengthsAreRejected() throws {
        let verifier = try ReceiptVectors.testVerifier()
        for header: [UInt8] in [[0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF], [0x30, 0x88, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
                                [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], [0x30, 0xFF]] {
            #expect(verify(header + Array(repeating: 0x30, count: 32), verifier) == "invalid-receipt")
        }
        // The same at payload level, where the DER walker is in charge.
        let payloads: [[UInt8]] = [
            [0x31, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x30, 0x00],
            [0x31, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00],
            [0x31, 0x06, 0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xF0],
            [0x31, 0x0B, 0x30, 0x09, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x7F, 0x0C],   // value longer than its SEQUENCE
            [0x31, 0x80, 0x00, 0x00],                                                        // indefinite length
            [0x31, 0x81, 0x05, 0x30, 0x03, 0x02, 0x01, 0x00],                                 // non-minimal length
        ]
        for payload in payloads {
            #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse(payload) }
        }
    }

    @Test func deepNestingIsRejected() throws {
        let verifier = try ReceiptVectors.testVerifier()
        // Envelope: 100,000 indefinite-length SEQUENCEs, and 3,000 definite ones (OpenSSL's limit is 30).
        var indefinite: [UInt8] = []
        for _ in 0..<100_000 { indefinite += [0x30, 0x80] }
        #expect(verify(indefinite, verifier) == "invalid-receipt")
        var definite: [UInt8] = [0x05, 0x00]
        for _ in 0..<3000 {
            let length = definite.count
            definite = [0x30, 0x82, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + definite
            if definite.count > 60_000 { break }
        }
        #expect(verify(definite, verifier) == "invalid-receipt")
        // Payload: nested SETs and OCTET STRINGs, and a signed receipt whose content is 40 deep.
        var nested: [UInt8] = [0x02, 0x01, 0x00]
        for level in 0..<5000 {
            let tag: UInt8 = level % 2 == 0 ? 0x31 : 0x04
            let length = nested.count
            nested = [tag, 0x82, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + nested
            if nested.count > 60_000 { break }
        }
        #expect(throws: VerificationError.self) { try ReceiptPayloadParser.parse(nested) }
        #expect(verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.fixture("deep-content")).receiptCode == "invalid-receipt")
    }

    @Test func realReceiptFlipsAreRejected() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let verifier = try AppReceiptVerifier(clock: ReceiptVectors.clock)
        let der = try receiptDER(try ReceiptVectors.base64(ReceiptVectors.appleReceipts[0]))
        var signature = der
        signature[der.count - 17] ^= 0x04
        #expect(verify(signature, verifier) == "receipt-signature-invalid")
        var content = der
        let bundle = try #require(receiptIndex(of: Array("dev.bonzer.weeka.app".utf8), in: der))
        content[bundle] = UInt8(ascii: "D")
        #expect(verify(content, verifier) == "receipt-signature-invalid")
        #expect(verify(Array(der.dropLast(10)), verifier) == "invalid-receipt")
    }
}
