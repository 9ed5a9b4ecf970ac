import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Trust anchors, chain signatures, Apple OIDs, key type and validity at `signedDate`.
@Suite struct ChainPolicyTests {
    @Test func rejectsChainNotEndingInAppleRoot() throws {
        let harness = try Harness()
        let verifier = try SignedDataVerifier(configuration: .init(environment: .sandbox), clock: TestClock.fixed)
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "untrusted-root")
    }

    @Test func neverTrustsTheRootInsideX5C() throws {
        let trusted = try Harness(prefix: "trusted")
        let attacker = try Harness(prefix: "attacker")
        let verifier = try trusted.verifier()
        // The attacker's own self-signed root in x5c[2].
        #expect(verifier.verifyAndDecodeTransaction(try attacker.signTransaction()).code == "untrusted-root")
        // The genuine root bytes in x5c[2], but the attacker's intermediate: the chain does not verify.
        let spliced = attacker.headerJSON(x5c: [attacker.pki.chain[0], attacker.pki.chain[1], trusted.pki.chain[2]])
        let jws = try attacker.sign(headerJSON: spliced, payloadJSON: Harness.transactionJSON())
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "invalid-chain")
        // The genuine intermediate and root with the attacker's leaf.
        let foreignLeaf = attacker.headerJSON(x5c: [attacker.pki.chain[0], trusted.pki.chain[1], trusted.pki.chain[2]])
        let jws2 = try attacker.sign(headerJSON: foreignLeaf, payloadJSON: Harness.transactionJSON())
        #expect(verifier.verifyAndDecodeTransaction(jws2).code == "invalid-chain")
    }

    @Test func acceptsAnyConfiguredTrustAnchor() throws {
        let first = try Harness(prefix: "first")
        let second = try Harness(prefix: "second")
        let verifier = try first.verifier(trustAnchors: [AppleRootCertificates.appleRootCAG3, first.pki.root, second.pki.root])
        #expect(verifier.verifyAndDecodeTransaction(try first.signTransaction()).code == "valid")
        #expect(verifier.verifyAndDecodeTransaction(try second.signTransaction()).code == "valid")
    }

    @Test func rejectsLeafIssuedDirectlyByRoot() throws {
        let harness = try Harness()
        let key = try EVPKey.generateEC()
        let leaf = try CertificateBuilder.make(.init(
            commonName: "direct leaf", subjectKey: key, issuer: (harness.pki.root, harness.pki.rootKey), isCA: false,
            pathLength: nil, keyUsage: "digitalSignature", markerOIDs: [ChainVerifier.leafOID],
            validFrom: TestClock.validFrom, validUntil: TestClock.validUntil))
        let header = harness.headerJSON(x5c: [Base64.encode(leaf.derBytes), harness.pki.chain[1], harness.pki.chain[2]])
        let jws = try JWSSigner(key: key, headerJSON: Array(header.utf8)).sign(payloadJSON: Harness.transactionJSON())
        #expect(try harness.verifier().verifyAndDecodeTransaction(jws).code == "invalid-chain")
    }

    @Test func rejectsIntermediateThatIsNotACA() throws {
        var options = TestPKI.Options()
        options.intermediateIsCA = false
        let harness = try Harness(options: options)
        #expect(try harness.verifier().verifyAndDecodeTransaction(try harness.signTransaction()).code == "invalid-chain")
    }

    @Test(arguments: [
        (nil as String?, ChainVerifier.leafOID as String?),
        ("1.2.840.113635.100.6.2.2", ChainVerifier.leafOID),
        ("1.2.840.113635.100.6.2", ChainVerifier.leafOID),
        ("1.2.840.113635.100.6.2.1.1", ChainVerifier.leafOID),
        (ChainVerifier.intermediateOID, nil),
        (ChainVerifier.intermediateOID, "1.2.840.113635.100.6.11.2"),
        (ChainVerifier.intermediateOID, ChainVerifier.intermediateOID),
        (ChainVerifier.leafOID, ChainVerifier.intermediateOID),
    ])
    func rejectsMissingAppleMarkerOIDs(_ intermediateOID: String?, _ leafOID: String?) throws {
        var options = TestPKI.Options()
        options.intermediateMarkerOID = intermediateOID
        options.leafMarkerOID = leafOID
        let harness = try Harness(options: options)
        let result = try harness.verifier().verifyAndDecodeTransaction(try harness.signTransaction())
        #expect(result.code == "missing-apple-oid")
    }

    @Test func rejectsLeafKeyThatIsNotP256() throws {
        var options = TestPKI.Options()
        options.leafCurve = "P-384"
        let harness = try Harness(options: options)
        let header = Base64URL.encode(Array(harness.headerJSON().utf8))
        let payload = Base64URL.encode(Array(Harness.transactionJSON().utf8))
        let jws = "\(header).\(payload).\(Base64URL.encode([UInt8](repeating: 7, count: 64)))"
        #expect(try harness.verifier().verifyAndDecodeTransaction(jws).code == "invalid-certificate")
    }

    @Test func checksValidityAtSignedDate() throws {
        let harness = try Harness()
        let verifier = try harness.verifier(clock: { Date(timeIntervalSince1970: 4_000_000_000) })  // clock far outside
        let from = Int64(TestClock.validFrom.timeIntervalSince1970) * 1000
        let until = Int64(TestClock.validUntil.timeIntervalSince1970) * 1000
        let cases: [(Int64, String)] = [
            (from - 1000, "certificate-not-yet-valid"), (from - 1, "certificate-not-yet-valid"), (from, "valid"),
            (until, "valid"), (until + 999, "valid"), (until + 1000, "certificate-expired"),
            (until + 86_400_000 * 365, "certificate-expired"),
        ]
        for (signedDate, expected) in cases {
            let jws = try harness.signTransaction(["signedDate": "\(signedDate)"])
            #expect(verifier.verifyAndDecodeTransaction(jws).code == expected, "signedDate \(signedDate)")
        }
        #expect(verifier.cacheStatistics.builds == 1)
    }

    @Test func usesClockWhenSignedDateIsAbsent() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction(["signedDate": nil])
        #expect(try harness.verifier(clock: { TestClock.inside }).verifyAndDecodeTransaction(jws).code == "valid")
        #expect(try harness.verifier(clock: { Date(timeIntervalSince1970: 1_800_000_000) })
            .verifyAndDecodeTransaction(jws).code == "certificate-expired")
        #expect(try harness.verifier(clock: { Date(timeIntervalSince1970: 1_600_000_000) })
            .verifyAndDecodeTransaction(jws).code == "certificate-not-yet-valid")
        let explicitNull = try harness.signTransaction(["signedDate": "null"])
        #expect(try harness.verifier(clock: { Date(timeIntervalSince1970: 1_800_000_000) })
            .verifyAndDecodeTransaction(explicitNull).code == "certificate-expired")
    }

    @Test func expiryDetailNamesTheCertificate() throws {
        // The whole test PKI shares one window: a later date fails on every certificate; the leaf is reported first.
        let harness = try Harness(validFrom: TestClock.validFrom, validUntil: TestClock.inside.addingTimeInterval(60))
        let jws = try harness.signTransaction(["signedDate": "\(TestClock.insideMilliseconds + 3_600_000)"])
        let error = try #require(try harness.verifier().verifyAndDecodeTransaction(jws).error)
        #expect(error.reason == .certificateExpired)
        #expect(error.detail.contains("leaf"))
    }

    @Test func strictProfileAcceptsTestPKI() throws {
        let harness = try Harness()
        let strict = try harness.verifier()
        #expect(strict.configuration.strictCertificateChecks)
        #expect(strict.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
    }
}
