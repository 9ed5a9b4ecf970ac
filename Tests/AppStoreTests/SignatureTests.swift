import Testing
@_spi(Testing) @testable import AppStore

/// ES256 signature form and validity.
@Suite struct SignatureTests {
    @Test func rejectsDEREncodedSignature() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let signingInput = segment(jws, 0) + "." + segment(jws, 1)
        let der = try harness.pki.signer.signatureDER(signingInput: signingInput)
        #expect(der.first == 0x30)
        let forged = signingInput + "." + Base64URL.encode(der)
        #expect(try harness.verifier().verifyAndDecodeTransaction(forged).code == "invalid-signature-format")
    }

    @Test(arguments: [0, 1, 32, 63, 65, 66, 72, 96, 128])
    func rejectsSignaturesThatAreNot64Bytes(_ count: Int) throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let signature = Base64URL.encode([UInt8](repeating: 0x11, count: count))
        let expected = count == 0 ? "malformed-jws" : "invalid-signature-format"
        #expect(try harness.verifier().verifyAndDecodeTransaction(replacingSegment(jws, 2, with: signature)).code == expected)
    }

    @Test func rejectsTamperedPayload() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let tampered = Base64URL.encode(Array(Harness.transactionJSON(["price": "1"]).utf8))
        #expect(try harness.verifier().verifyAndDecodeTransaction(replacingSegment(jws, 1, with: tampered)).code == "invalid-signature")
    }

    @Test func rejectsTamperedHeaderUnderValidChain() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let header = Base64URL.encode(Array(harness.headerJSON(extra: ",\"kid\":\"x\"").utf8))
        #expect(try harness.verifier().verifyAndDecodeTransaction(replacingSegment(jws, 0, with: header)).code == "invalid-signature")
    }

    @Test func rejectsSignatureByAnotherKey() throws {
        let harness = try Harness(prefix: "genuine")
        let other = try Harness(prefix: "other")
        let forged = try JWSSigner(key: other.pki.leafKey, headerJSON: Array(harness.headerJSON().utf8))
            .sign(payloadJSON: Harness.transactionJSON())
        #expect(try harness.verifier().verifyAndDecodeTransaction(forged).code == "invalid-signature")
    }

    @Test func rejectsDegenerateAndSwappedSignatures() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let raw = try #require(Base64URL.decode(segment(jws, 2)))
        let variants: [[UInt8]] = [
            [UInt8](repeating: 0, count: 64),
            [UInt8](repeating: 0xFF, count: 64),
            Array(raw[32...] + raw[..<32]),
            Array(raw[..<63]) + [raw[63] ^ 1],
        ]
        let verifier = try harness.verifier()
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        for signature in variants {
            #expect(verifier.verifyAndDecodeTransaction(replacingSegment(jws, 2, with: Base64URL.encode(signature))).code == "invalid-signature")
        }
    }

    @Test func signerProducesFreshRawSignatures() throws {
        let harness = try Harness()
        let first = try harness.signTransaction()
        let second = try harness.signTransaction()
        #expect(segment(first, 0) == segment(second, 0))
        #expect(segment(first, 2) != segment(second, 2))
        #expect(Base64URL.decode(segment(first, 2))?.count == 64)
        let header = try #require(Base64URL.decode(segment(first, 0)))
        #expect(String(decoding: header, as: UTF8.self).hasPrefix("{\"alg\":\"ES256\",\"x5c\":[\""))
    }
}
