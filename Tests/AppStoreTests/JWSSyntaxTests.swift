import Testing
@_spi(Testing) @testable import AppStore

/// Compact JWS syntax, canonical base64url in every segment, and size limits.
@Suite struct JWSSyntaxTests {
    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", ".b.c", "a..c", "a.b.", "..", "...", "a.b.c."])
    func rejectsMalformedCompactSerialization(_ input: String) throws {
        let harness = try Harness()
        #expect(try harness.verifier().verifyAndDecodeTransaction(input).code == "malformed-jws", "\(input)")
    }

    @Test func rejectsExtraSegmentOnValidJWS() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let verifier = try harness.verifier()
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        #expect(verifier.verifyAndDecodeTransaction(jws + ".e30").code == "malformed-jws")
        #expect(verifier.verifyAndDecodeTransaction(jws + ".").code == "malformed-jws")
    }

    @Test func rejectsNonCanonicalHeaderSegment() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let verifier = try harness.verifier()
        let header = segment(jws, 0)
        for bad in [header + "=", header + "==", " " + header, header.replacingOccurrences(of: "J", with: "+"),
                    header.replacingOccurrences(of: "e", with: "/"), header + "\n"] {
            let result = verifier.verifyAndDecodeTransaction(replacingSegment(jws, 0, with: bad))
            #expect(result.code == "invalid-base64url")
        }
    }

    @Test func rejectsNonCanonicalPayloadSegment() throws {
        let harness = try Harness()
        // A payload whose encoded length is 2 mod 4 (one trailing byte): padding and trailing bits apply.
        var json = Harness.transactionJSON()
        while Base64URL.encode(Array(json.utf8)).utf8.count % 4 != 2 { json += " " }
        let jws = try harness.pki.signer.sign(payloadJSON: json)
        let verifier = try harness.verifier()
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        let payload = segment(jws, 1)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let offset = alphabet.firstIndex(of: payload.last!)!
        let nonZeroTrailingBits = String(payload.dropLast()) + String(alphabet[offset + 1])
        let head = String(payload.prefix(10))
        let tail = String(payload.dropFirst(11))
        let variants: [String] = [
            payload + "==",                              // padding
            head + "\n" + String(payload.dropFirst(10)),  // whitespace
            head + "+" + tail,                           // standard alphabet
            head + "/" + tail,
            nonZeroTrailingBits,                         // trailing bits
            payload + "AAA",                             // length 1 mod 4
            head + "%" + tail,                           // outside the alphabet
        ]
        for bad in variants {
            #expect(verifier.verifyAndDecodeTransaction(replacingSegment(jws, 1, with: bad)).code == "invalid-base64url", "\(bad.suffix(4))")
        }
    }

    @Test func rejectsNonCanonicalSignatureSegment() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let verifier = try harness.verifier()
        let signature = segment(jws, 2)
        #expect(signature.utf8.count == 86)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastOffset = alphabet.firstIndex(of: signature.last!)!
        let variants: [String] = [
            signature + "==",
            String(signature.dropLast()) + String(alphabet[lastOffset | 1]),
            " " + String(signature.dropFirst()),
            "+" + String(signature.dropFirst()),
            "/" + String(signature.dropFirst()),
            signature + "AAA",
        ]
        for bad in variants {
            #expect(verifier.verifyAndDecodeTransaction(replacingSegment(jws, 2, with: bad)).code == "invalid-base64url")
        }
    }

    @Test func enforcesSizeLimits() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let headerCount = segment(jws, 0).utf8.count
        let payloadCount = segment(jws, 1).utf8.count
        let whole = try harness.verifier(limits: .init(maxJWSBytes: jws.utf8.count - 1, maxHeaderBytes: headerCount,
                                                       maxPayloadBytes: payloadCount))
        #expect(whole.verifyAndDecodeTransaction(jws).code == "too-large")
        let header = try harness.verifier(limits: .init(maxHeaderBytes: headerCount - 1))
        #expect(header.verifyAndDecodeTransaction(jws).code == "too-large")
        let payload = try harness.verifier(limits: .init(maxPayloadBytes: payloadCount - 1))
        #expect(payload.verifyAndDecodeTransaction(jws).code == "too-large")
        let exact = try harness.verifier(limits: .init(maxJWSBytes: jws.utf8.count, maxHeaderBytes: headerCount,
                                                       maxPayloadBytes: payloadCount))
        #expect(exact.verifyAndDecodeTransaction(jws).code == "valid")
        // Default limit: a 70 KB JWS is rejected before any decoding.
        let huge = String(repeating: "A", count: 70_000) + ".e30.AA"
        #expect(try harness.verifier().verifyAndDecodeTransaction(huge).code == "too-large")
    }

    @Test func errorDetailNeverContainsTheJWS() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction(["bundleId": "\"com.other\""])
        let error = try #require(try harness.verifier().verifyAndDecodeTransaction(jws).error)
        #expect(error.reason == .bundleIdMismatch)
        #expect(!error.detail.contains(segment(jws, 1)))
        #expect(!error.description.contains(segment(jws, 0).prefix(40)))
        #expect(error.isRetryable == false)
    }
}
