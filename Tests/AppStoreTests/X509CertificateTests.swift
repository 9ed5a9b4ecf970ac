import Foundation
import Testing
@_spi(Testing) @testable import AppStore

@Suite struct X509CertificateTests {
    @Test func appleRootG3Properties() {
        let root = AppleRootCertificates.appleRootCAG3
        #expect(root.sha256Fingerprint == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
        #expect(root.notBefore == Date(timeIntervalSince1970: 1_398_881_946))   // 2014-04-30T18:19:06Z
        #expect(root.notAfter == Date(timeIntervalSince1970: 2_187_800_346))    // 2039-04-30T18:19:06Z
        #expect(root.derBytes.count == 583)
    }

    @Test func loadsPEMAndDERFiles() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let certs = Vectors.directory.appendingPathComponent("apple/certs").path
        let der = try X509Certificate.load(path: certs + "/AppleRootCA-G3.cer")
        let pem = try X509Certificate.load(path: certs + "/AppleRootCA-G3.pem")
        #expect(der == pem)
        #expect(der == [AppleRootCertificates.appleRootCAG3])
        let both = try X509Certificate.load(path: certs + "/roots-for-receipts.pem")
        #expect(both.map(\.sha256Fingerprint) == [
            "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024",
            "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179",
        ])
        let g6 = try X509Certificate(pem: try Vectors.text("apple/certs/AppleWWDRCAG6.pem"))
        #expect(g6.sha256Fingerprint == "BDD4ED6E74691F0C2BFD01BE0296197AF1379E0418E2D300EFA9C3BEF642CA30")
        #expect(g6.hasExtension(oid: ChainVerifier.intermediateOID))
        #expect(!g6.hasExtension(oid: ChainVerifier.leafOID))
        let leaf = try X509Certificate.load(path: certs + "/leaf-ProdECC-receipt-signing-2025-2027.cer")[0]
        #expect(leaf.hasExtension(oid: ChainVerifier.leafOID))
    }

    @Test func rejectsInvalidInput() throws {
        let der = AppleRootCertificates.appleRootCAG3.derBytes
        #expect(throws: X509CertificateError.self) { try X509Certificate(der: []) }
        #expect(throws: X509CertificateError.self) { try X509Certificate(der: der + [0]) }
        #expect(throws: X509CertificateError.self) { try X509Certificate(der: Array(der.dropLast())) }
        #expect(throws: X509CertificateError.self) { try X509Certificate(pem: "no pem here") }
        let pem = AppleRootCertificates.appleRootCAG3.pemString
        #expect(throws: X509CertificateError.self) { try X509Certificate(pem: pem + pem) }
        #expect(throws: X509CertificateError.self) { try X509Certificate(pem: pem.replacingOccurrences(of: "MII", with: "M*I")) }
        #expect(throws: X509CertificateError.self) { try X509Certificate.load(path: "/nonexistent/cert.pem") }
        #expect(try X509Certificate(pem: pem) == AppleRootCertificates.appleRootCAG3)
    }

    @Test func testPKIIsShapedLikeApples() throws {
        let pki = try TestPKI.generate(validFrom: TestClock.validFrom, validUntil: TestClock.validUntil, commonNamePrefix: "shape")
        #expect(pki.root.subject.contains("CN=shape Root CA"))
        #expect(pki.intermediate.subject.contains("CN=shape Intermediate CA"))
        #expect(pki.leaf.subject.contains("CN=shape StoreKit Signing"))
        #expect(pki.intermediate.hasExtension(oid: ChainVerifier.intermediateOID))
        #expect(pki.leaf.hasExtension(oid: ChainVerifier.leafOID))
        #expect(!pki.leaf.hasExtension(oid: ChainVerifier.intermediateOID))
        #expect(pki.leaf.notBefore == TestClock.validFrom && pki.leaf.notAfter == TestClock.validUntil)
        #expect(pki.chain.count == 3)
        #expect(pki.chain.map { Base64.decode($0)! } == [pki.leaf.derBytes, pki.intermediate.derBytes, pki.root.derBytes])
        // OpenSSL's strict X.509 profile (critical basic constraints, key identifiers, …) accepts it.
        let chain = try ChainVerifier(trustAnchors: [pki.root], strict: true).verify(x5c: pki.chain.map { Base64.decode($0)! })
        #expect(chain.windows.map(\.role) == ["leaf", "intermediate", "root"])
        #expect(chain.leafKey.isP256)
    }
}
