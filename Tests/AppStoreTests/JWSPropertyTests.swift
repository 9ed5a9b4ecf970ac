import Foundation
import MutationTesting
import Testing
@_spi(Testing) @testable import AppStore

/// Seeded random mutations (bit flips, truncation, insertion, byte duplication and deletion,
/// segment swaps) of valid signed data, thousands of cases per test. Whatever the input, the
/// verifier answers a value: a valid result, or a rejection with a documented, final reason and
/// a detail. A mutated JWS verifies only if the mutation left the signing input and the
/// signature bytes identical. (ECDSA signatures are malleable: `(r, n − s)` verifies as well as
/// `(r, s)`, as Apple's library also accepts; random mutations do not produce it.)
///
/// The in-process twin of the libFuzzer targets in `Fuzz/`; a failure names the case index
/// and mutations, and replays identically because the generator is seeded.
@Suite struct JWSPropertyTests {
    /// Cases per test (each costs one ES256 verification, about 0.3 ms in a debug build).
    static let cases = 2_000
    static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Reasons only a bad signature, header or chain produce; a payload the test signed itself
    /// must never get one.
    static let signatureAndChainReasons: Set<VerificationReason> = [
        .invalidBase64URL, .unsupportedAlgorithm, .forbiddenHeader, .missingX5C, .invalidChainLength,
        .invalidCertificate, .untrustedRoot, .missingAppleOID, .invalidChain, .invalidSignatureFormat, .invalidSignature,
    ]

    @Test func mutatedCompactJWSVerifiesOnlyWhenSigningInputAndSignatureAreUnchanged() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        let original = try harness.signTransaction()
        try #require(verifier.verifyAndDecodeTransaction(original).value != nil)
        let mutator = Mutator(separator: UInt8(ascii: "."), alphabet: Self.base64URLAlphabet + Array(".=+/ ".utf8))
        var generator = SeededGenerator(seed: 0x4A57_0001)
        var report = Report()
        for index in 0..<Self.cases {
            let (bytes, mutations) = mutator.mutate(Array(original.utf8), count: Int.random(in: 1...3, using: &generator),
                                                    using: &generator)
            let mutated = String(decoding: bytes, as: UTF8.self)
            report.check(verifier.verifyAndDecodeTransaction(mutated), validAllowed: Self.sameSignedBytes(mutated, original),
                         case: "\(index) \(mutations)")
        }
        report.expectClean(minimumDistinctReasons: 4)
    }

    @Test func mutatedDecodedSegmentsVerifyOnlyWhenUnchanged() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        let original = try harness.signTransaction()
        let decoded = try (0..<3).map { try #require(Base64URL.decode(segment(original, $0))) }
        let mutator = Mutator(separator: UInt8(ascii: ","))
        var generator = SeededGenerator(seed: 0x4A57_0002)
        var report = Report()
        for index in 0..<Self.cases {
            let target = Int.random(in: 0..<3, using: &generator)
            let (bytes, mutations) = mutator.mutate(decoded[target], count: Int.random(in: 1...2, using: &generator),
                                                    using: &generator)
            let mutated = replacingSegment(original, target, with: Base64URL.encode(bytes))
            report.check(verifier.verifyAndDecodeTransaction(mutated), validAllowed: bytes == decoded[target],
                         case: "\(index) segment \(target) \(mutations)")
        }
        report.expectClean(minimumDistinctReasons: 5)
    }

    @Test func resignedMutatedPayloadsAreValidOrRejectedForTheirContent() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        let transaction = Array(Harness.transactionJSON().utf8)
        let notification = Array(NotificationJSON.notification(type: "DID_RENEW", containers: [
            ("data", NotificationJSON.data(transaction: try harness.signTransaction(),
                                           renewal: try harness.pki.signer.sign(payloadJSON: NotificationJSON.renewalJSON()))),
        ]).utf8)
        let mutator = Mutator(separator: UInt8(ascii: ","), alphabet: Array(#"{}[]":,.-0123456789 \"#.utf8) + [0x00, 0xC3])
        var generator = SeededGenerator(seed: 0x4A57_0003)
        var report = Report()
        for index in 0..<Self.cases / 2 {
            let isNotification = index % 4 == 3
            let (payload, mutations) = mutator.mutate(isNotification ? notification : transaction,
                                                      count: Int.random(in: 1...2, using: &generator), using: &generator)
            let jws = try harness.pki.signer.sign(payload: payload)
            let rejection: VerificationError?
            if isNotification {
                let result = verifier.verifyAndDecodeNotification(jws)
                report.check(result, validAllowed: true, case: "\(index) notification \(mutations)")
                rejection = result.error
            } else {
                let result = verifier.verifyAndDecodeTransaction(jws)
                report.check(result, validAllowed: true, case: "\(index) transaction \(mutations)")
                rejection = result.error
            }
            if let rejection, Self.signatureAndChainReasons.contains(rejection.reason),
               !(isNotification && rejection.detail.hasPrefix("data.")) {
                report.failures.append("case \(index) \(mutations): signed payload rejected as \(rejection)")
            }
        }
        report.expectClean(minimumDistinctReasons: 3)
    }

    @Test func mutatedJSONIsParsedOrRejectedWithAJSONReason() throws {
        let header = try Harness().headerJSON()
        let documents = [Harness.transactionJSON(), NotificationJSON.renewalJSON(), header,
                         #"{"a":[1,-2.5e3,true,null,{"b":"\u00e9\ud83d\ude00"}],"c":""}"#].map { Array($0.utf8) }
        let mutator = Mutator(separator: UInt8(ascii: ","), alphabet: Array(#"{}[]":,.-+eE0123456789 \ut"#.utf8) + [0x00, 0x1F, 0xC3, 0xED])
        var generator = SeededGenerator(seed: 0x4A57_0004)
        var failures: [String] = []
        var accepted = 0
        for index in 0..<Self.cases * 3 {
            let (bytes, mutations) = mutator.mutate(documents[index % documents.count],
                                                    count: Int.random(in: 1...3, using: &generator), using: &generator)
            do throws(VerificationError) {
                _ = try JSONParser.parse(bytes, maxDepth: 16)
                accepted += 1
                if (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) == nil {
                    failures.append("case \(index) \(mutations): accepted what Foundation rejects")
                }
            } catch {
                if ![.invalidJSON, .duplicateJSONMember, .jsonTooDeep].contains(error.reason) || error.detail.isEmpty {
                    failures.append("case \(index) \(mutations): \(error)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))")
        #expect(accepted > 0)
    }

    @Test func base64URLAcceptsOnlyCanonicalText() {
        let mutator = Mutator(separator: UInt8(ascii: "."), alphabet: Self.base64URLAlphabet + Array("=+/ ".utf8))
        var generator = SeededGenerator(seed: 0x4A57_0005)
        var failures: [String] = []
        for index in 0..<Self.cases * 5 {
            let raw = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(raw)
            if Base64URL.decode(encoded) != raw { failures.append("case \(index): round trip of \(raw)") }
            let (mutated, mutations) = mutator.mutate(Array(encoded.utf8), count: 1, using: &generator)
            if let decoded = mutated.withUnsafeBufferPointer({ Base64URL.decode($0) }),
               Array(Base64URL.encode(decoded).utf8) != mutated {
                failures.append("case \(index) \(mutations): accepted non-canonical \(String(decoding: mutated, as: UTF8.self))")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))")
    }

    /// Whether `mutated` has the same signing input (`header.payload` text) and the same
    /// decoded signature bytes as `original`.
    static func sameSignedBytes(_ mutated: String, _ original: String) -> Bool {
        let lhs = mutated.split(separator: ".", omittingEmptySubsequences: false)
        let rhs = original.split(separator: ".", omittingEmptySubsequences: false)
        guard lhs.count == 3, lhs[0] == rhs[0], lhs[1] == rhs[1],
              let signature = Base64URL.decode(String(lhs[2])) else { return false }
        return signature == Base64URL.decode(String(rhs[2]))
    }
}

/// Collects property violations and the rejection reasons seen.
private struct Report {
    var failures: [String] = []
    var reasons: Set<String> = []
    var valid = 0

    mutating func check<T>(_ result: VerificationResult<T>, validAllowed: Bool, case label: @autoclosure () -> String) {
        switch result {
        case .valid:
            valid += 1
            if !validAllowed { failures.append("case \(label()): a changed JWS verified") }
        case .invalid(let error):
            reasons.insert(error.reason.code)
            if !VerificationReason.allReasons.contains(error.reason) || error.reason.code.isEmpty || error.detail.isEmpty
                || error.isRetryable {
                failures.append("case \(label()): undocumented or empty rejection \(error)")
            }
        }
    }

    /// Expects no violation, and enough distinct reasons that the mutations reached several checks.
    func expectClean(minimumDistinctReasons: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))", sourceLocation: sourceLocation)
        #expect(reasons.count >= minimumDistinctReasons, "reasons seen: \(reasons.sorted())", sourceLocation: sourceLocation)
    }
}
