import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Chains are cached by the exact certificate bytes (like the JWS verifier's headers): a warm
/// receipt costs parsing plus one RSA verification, and rejected chains never evict verified ones.
@Suite(.serialized) struct ReceiptCacheTests {
    @Test func chainIsBuiltOncePerCertificateSet() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let valid = try ReceiptVectors.fixture("valid")
        for _ in 0..<5 { #expect(verifier.verifyAndDecodeAppReceipt(valid).receiptCode == "valid") }
        #expect(verifier.cacheStatistics.builds == 1 && verifier.cacheStatistics.verified == 1)
        // Same certificates, different payload: still one chain.
        #expect(verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.fixture("xcode-type")).receiptCode == "environment-mismatch")
        #expect(verifier.cacheStatistics.builds == 1)
        // A forged content under the cached chain is still caught (the signature is per receipt).
        var der = try receiptDER(valid)
        der[der.count - 5] ^= 0x10
        #expect(verifier.verifyAndDecodeAppReceipt(receiptBase64(der)).receiptCode == "receipt-signature-invalid")
        // Rejected chains are cached separately.
        let selfSigned = try ReceiptVectors.fixture("self-signed")
        for _ in 0..<3 { #expect(verifier.verifyAndDecodeAppReceipt(selfSigned).receiptCode == "untrusted-root") }
        #expect(verifier.cacheStatistics.builds == 2)
        #expect(verifier.cacheStatistics.verified == 1 && verifier.cacheStatistics.rejected == 1)
        // A different leaf under the same intermediate is a different certificate set.
        #expect(verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.fixture("leaf-without-oid")).receiptCode == "missing-apple-oid")
        #expect(verifier.cacheStatistics.builds == 3)
    }

    @Test func anotherSignerInTheSameCertificatesCannotPoisonTheCache() throws {
        let verifier = try ReceiptVectors.testVerifier()
        let valid = try ReceiptVectors.fixture("valid")
        let byIntermediate = try ReceiptVectors.fixture("signed-by-intermediate")
        // Same certificates field, different SignerInfo: a separate cache entry either way round.
        #expect(verifier.verifyAndDecodeAppReceipt(byIntermediate).receiptCode == "invalid-chain")
        #expect(verifier.verifyAndDecodeAppReceipt(valid).receiptCode == "valid")
        #expect(verifier.verifyAndDecodeAppReceipt(byIntermediate).receiptCode == "invalid-chain")
        #expect(verifier.cacheStatistics.builds == 2)
        let a = try #require(PKCS7Layout(der: try receiptDER(valid)))
        let b = try #require(PKCS7Layout(der: try receiptDER(byIntermediate)))
        #expect(a.certificates == b.certificates && a.signerIdentifier != b.signerIdentifier)
    }

    @Test func cachedPathChecksTheSignatureAgainstTheCachedLeaf() throws {
        let der = try receiptDER(try ReceiptVectors.fixture("valid"))
        let full = try PKCS7Container(der: der, maxCertificates: 8)
        let layout = try #require(PKCS7Layout(der: der))
        let stripped = try PKCS7Container(der: layout.withoutCertificates, maxCertificates: 8)
        #expect(stripped.certificateCount == 0 && stripped.signer == nil && stripped.content == full.content)
        #expect(full.certificateCount == 3 && full.signer != nil)
        let leaf = try X509Certificate(der: full.certificateDER(at: full.signerIndex))
        try stripped.verifySignature(signer: leaf)
        let others = try (0..<3).filter { $0 != full.signerIndex }.map { try X509Certificate(der: full.certificateDER(at: $0)) }
        for other in others {
            #expect(throws: VerificationError.self) { try stripped.verifySignature(signer: other) }
        }
        #expect(throws: VerificationError.self) { try stripped.verifySignature() }    // no embedded signer
        // BER (Xcode) envelopes have no layout and take the full OpenSSL path.
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        #expect(PKCS7Layout(der: try receiptDER(try ReceiptVectors.base64(ReceiptVectors.xcodeReceipt))) == nil)
    }

    @Test func rejectedFloodCannotEvictVerifiedChains() throws {
        let verifier = try ReceiptVectors.testVerifier {
            $0.limits.chainCacheCapacity = 2
            $0.limits.rejectedChainCacheCapacity = 1
        }
        let valid = try ReceiptVectors.fixture("valid")
        #expect(verifier.verifyAndDecodeAppReceipt(valid).receiptCode == "valid")
        for name in ["self-signed", "leaf-without-oid", "intermediate-without-oid", "leaf-under-root"] {
            #expect(verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.fixture(name)).receiptCode != "valid")
        }
        let builds = verifier.cacheStatistics.builds
        #expect(verifier.verifyAndDecodeAppReceipt(valid).receiptCode == "valid")
        #expect(verifier.cacheStatistics.builds == builds)
    }

    @Test func concurrentVerificationAgrees() async throws {
        let verifier = try ReceiptVectors.testVerifier()
        let valid = try ReceiptVectors.fixture("valid")
        let forged = try ReceiptVectors.fixture("self-signed")
        let codes = await withTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                group.addTask { verifier.verifyAndDecodeAppReceipt(index % 4 == 3 ? forged : valid).receiptCode }
            }
            var all: [String] = []
            for await code in group { all.append(code) }
            return all
        }
        #expect(codes.filter { $0 == "valid" }.count == 48)
        #expect(codes.filter { $0 == "untrusted-root" }.count == 16)
    }

    /// Parse + verify of r1 (Apple's current G5 chain, RSA-2048/SHA-256) with a warm chain cache.
    /// Each call is timed on its own; the fastest is the uncontended cost (the suite shares two
    /// cores with parallel tests), the median is printed alongside.
    @Test func warmVerificationIsWellUnderAMillisecond() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let verifier = try AppReceiptVerifier(clock: ReceiptVectors.clock)
        let r1 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[0])
        for _ in 0..<20 { _ = verifier.verifyAndDecodeAppReceipt(r1) }
        var samples: [Double] = []
        for _ in 0..<1000 {
            let start = ContinuousClock.now
            let valid = verifier.verifyAndDecodeAppReceipt(r1).value != nil
            let elapsed = ContinuousClock.now - start
            #expect(valid)
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        samples.sort()
        let best = samples[0], median = samples[samples.count / 2]
        print("receipt r1 parse+verify (warm chain, debug build): best \(Int(best)) µs, median \(Int(median)) µs")
        #expect(verifier.cacheStatistics.builds == 1)
        #expect(best < 1000)
    }
}
