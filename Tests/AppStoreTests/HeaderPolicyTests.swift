import Testing
@_spi(Testing) @testable import AppStore

/// Header policy: `alg`, forbidden members, `x5c` shape.
@Suite struct HeaderPolicyTests {
    private func code(_ harness: Harness, header: String) throws -> String {
        let jws = try harness.sign(headerJSON: header, payloadJSON: Harness.transactionJSON())
        return try harness.verifier().verifyAndDecodeTransaction(jws).code
    }

    @Test(arguments: ["\"none\"", "\"HS256\"", "\"RS256\"", "\"ES384\"", "\"es256\"", "\"ES256 \"", "\"EdDSA\"", "256", "null", "[\"ES256\"]"])
    func rejectsAlgorithmsOtherThanES256(_ alg: String) throws {
        let harness = try Harness()
        #expect(try code(harness, header: harness.headerJSON(alg: alg)) == "unsupported-algorithm", "\(alg)")
    }

    @Test func rejectsMissingAlgorithm() throws {
        let harness = try Harness()
        let list = harness.pki.chain.map { "\"\($0)\"" }.joined(separator: ",")
        #expect(try code(harness, header: "{\"x5c\":[\(list)]}") == "unsupported-algorithm")
    }

    @Test func rejectsAlgNoneWithEmptySignature() throws {
        let harness = try Harness()
        let header = Base64URL.encode(Array(harness.headerJSON(alg: "\"none\"").utf8))
        let payload = Base64URL.encode(Array(Harness.transactionJSON().utf8))
        #expect(try harness.verifier().verifyAndDecodeTransaction("\(header).\(payload).").code == "malformed-jws")
        #expect(try harness.verifier().verifyAndDecodeTransaction("\(header).\(payload).AA").code == "unsupported-algorithm")
    }

    @Test(arguments: [
        (",\"jwk\":{\"kty\":\"EC\"}", "jwk"), (",\"jku\":\"https://example.com/keys\"", "jku"),
        (",\"x5u\":\"https://example.com/chain.pem\"", "x5u"), (",\"crit\":[\"exp\"]", "crit"), (",\"crit\":[]", "crit"),
        (",\"b64\":false", "b64"), (",\"zip\":\"DEF\"", "zip"), (",\"enc\":\"A128GCM\"", "enc"),
    ])
    func rejectsForbiddenHeaderMembers(_ extra: String, _ name: String) throws {
        let harness = try Harness()
        #expect(try code(harness, header: harness.headerJSON(extra: extra)) == "forbidden-header", "\(name)")
    }

    @Test func ignoresOtherHeaderMembers() throws {
        let harness = try Harness()
        let extra = ",\"typ\":\"JWT\",\"kid\":\"Apple_Xcode_Key\",\"x5t#S256\":\"abc\",\"cty\":\"json\",\"future\":{\"a\":[1]}"
        #expect(try code(harness, header: harness.headerJSON(extra: extra)) == "valid")
    }

    @Test func rejectsMissingOrEmptyX5C() throws {
        let harness = try Harness()
        #expect(try code(harness, header: "{\"alg\":\"ES256\"}") == "missing-x5c")
        #expect(try code(harness, header: "{\"alg\":\"ES256\",\"x5c\":[]}") == "missing-x5c")
        #expect(try code(harness, header: "{\"alg\":\"ES256\",\"x5c\":null}") == "missing-x5c")
        #expect(try code(harness, header: "{\"alg\":\"ES256\",\"x5cwrong\":[\"\(harness.pki.chain[0])\"]}") == "missing-x5c")
    }

    @Test func rejectsWrongChainLength() throws {
        let harness = try Harness()
        let chain = harness.pki.chain
        #expect(try code(harness, header: harness.headerJSON(x5c: [chain[0]])) == "invalid-chain-length")
        #expect(try code(harness, header: harness.headerJSON(x5c: [chain[0], chain[1]])) == "invalid-chain-length")
        #expect(try code(harness, header: harness.headerJSON(x5c: [chain[1], chain[2]])) == "invalid-chain-length")
        #expect(try code(harness, header: harness.headerJSON(x5c: chain + [chain[2]])) == "invalid-chain-length")
        #expect(try code(harness, header: harness.headerJSON(x5c: [chain[0], chain[1], chain[1], chain[2]])) == "invalid-chain-length")
    }

    @Test func rejectsUndecodableCertificates() throws {
        let harness = try Harness()
        let chain = harness.pki.chain
        let urlAlphabet = chain[0].replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let candidates: [String] = [
            harness.headerJSON(x5c: ["abc", chain[1], chain[2]]),                                // not base64
            harness.headerJSON(x5c: [Base64.encode(Array("abc".utf8)), chain[1], chain[2]]),      // not DER
            harness.headerJSON(x5c: [String(chain[0].dropLast(4)), chain[1], chain[2]]),          // truncated DER
            harness.headerJSON(x5c: [chain[0] + "AAAA", chain[1], chain[2]]),                     // trailing bytes
            harness.headerJSON(x5c: [String(chain[0].prefix(64)) + "\\n" + String(chain[0].dropFirst(64)), chain[1], chain[2]]),
            harness.headerJSON(x5c: [chain[0], chain[1], Base64.encode([0x30, 0x03, 0x02, 0x01, 0x01])]),
            "{\"alg\":\"ES256\",\"x5c\":\"\(chain[0])\"}",
            "{\"alg\":\"ES256\",\"x5c\":[1,2,3]}",
        ]
        for header in candidates {
            #expect(try code(harness, header: header) == "invalid-certificate")
        }
        if urlAlphabet != chain[0] {
            #expect(try code(harness, header: harness.headerJSON(x5c: [urlAlphabet, chain[1], chain[2]])) == "invalid-certificate")
        }
    }

    @Test func rejectsHeaderThatIsNotStrictJSON() throws {
        let harness = try Harness()
        #expect(try code(harness, header: "[\"ES256\"]") == "invalid-json")
        #expect(try code(harness, header: "{\"alg\":\"ES256\",}") == "invalid-json")
        #expect(try code(harness, header: harness.headerJSON(extra: ",\"alg\":\"ES256\"")) == "duplicate-json-member")
        #expect(try code(harness, header: harness.headerJSON(extra: ",\"x\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]")) == "json-too-deep")
    }
}
