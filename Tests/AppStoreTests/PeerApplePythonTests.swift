import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Verdicts of Apple's `app-store-server-library-python` test data (`../shared/vectors/peer-apple-python/`)
/// that concern JWS parsing, chains and transactions. Apple's codes map to ours as
/// `VERIFICATION_FAILURE` → a chain/format code, `INVALID_CHAIN_LENGTH` → `invalid-chain-length`,
/// `INVALID_CERTIFICATE` → `invalid-certificate`, `INVALID_APP_IDENTIFIER` → `bundle-id-mismatch`,
/// `INVALID_ENVIRONMENT` → `environment-mismatch`.
@Suite struct PeerApplePythonTests {
    static let base = "peer-apple-python/"
    /// Apple's tests run with strict X.509 checks off ("no authority identifiers on test certs").
    /// The shared JWS path alone (no payload decoder), as a result.
    static func verifyJWS(_ jws: String, with verifier: SignedDataVerifier) -> Result<JWSVerifier.Verified, VerificationError> {
        Array(jws.utf8).withUnsafeBufferPointer { bytes in
            do throws(VerificationError) {
                return .success(try verifier.core.verify(bytes: bytes, dateMembers: ["signedDate"]))
            } catch {
                return .failure(error)
            }
        }
    }

    private func verifier(anchor: X509Certificate? = nil, environment: AppStoreEnvironmentPolicy = .sandbox,
                          bundleIds: Set<String> = ["com.example"], strict: Bool = false,
                          allowedTestEnvironments: Set<AppStoreEnvironment> = []) throws -> SignedDataVerifier {
        let root = try anchor ?? X509Certificate(der: Vectors.bytes(Self.base + "certs/testCA.der"))
        return try SignedDataVerifier(configuration: .init(
            trustAnchors: [root], bundleIds: bundleIds, environment: environment,
            allowedTestEnvironments: allowedTestEnvironments, strictCertificateChecks: strict))
    }

    private func mock(_ name: String) throws -> String { try Vectors.text(Self.base + "mock_signed_data/" + name) }

    /// x5c[2] of a mock file (the second test root that Apple's library silently ignores).
    private func embeddedRoot(_ jws: String) throws -> X509Certificate {
        let header = try #require(Base64URL.decode(segment(jws, 0)))
        guard case .object(let object) = try JSONParser.parse(header, maxDepth: 8), case .array(let x5c)? = object["x5c"],
              case .string(let root) = x5c[2] else { throw VerificationError(.invalidJSON, "unexpected header") }
        return try X509Certificate(der: try #require(Base64.decode(root)))
    }

    @Test func renewalInfoDecodes() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let jws = try mock("renewalInfo")
        let info = try verifier().verifyAndDecodeRenewalInfo(jws).get()          // Apple: OK
        #expect(info.environment == .sandbox)
        #expect(info.signedDate == Date(millisecondsSince1970: 1_672_956_154_000))
        #expect(try verifier(environment: .production).verifyAndDecodeRenewalInfo(jws).code == "environment-mismatch")
        // Apple with strict checks on (its default): VERIFICATION_FAILURE.
        #expect(try verifier(strict: true).verifyAndDecodeRenewalInfo(jws).code == "invalid-chain")
    }

    @Test func transactionInfoCarriesADifferentRoot() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let jws = try mock("transactionInfo")
        // Stricter than Apple (which ignores x5c[2] and reports OK): the embedded root is not the anchor.
        #expect(try verifier().verifyAndDecodeTransaction(jws).code == "untrusted-root")
        // Trusting the embedded root reproduces Apple's remaining verdicts. The payload lacks the ids
        // we require, so a transaction decode reports missing-field; the JWS itself verifies.
        let anchor = try embeddedRoot(jws)
        #expect(anchor.sha256Fingerprint.hasPrefix("A6868C46"))
        let trusting = try verifier(anchor: anchor)
        guard case .success(let verified) = Self.verifyJWS(jws, with: trusting) else {
            Issue.record("JWS did not verify")
            return
        }
        #expect(verified.payload["bundleId"] == .string("com.example"))
        #expect(trusting.verifyAndDecodeTransaction(jws).code == "missing-field")
    }

    @Test func notificationsVerifyAtTheJWSLevel() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        // Claims of notifications belong to the notification decoder; here only the shared JWS path.
        let notification = try mock("testNotification")
        #expect(Self.verifyJWS(notification, with: try verifier(anchor: embeddedRoot(notification))).map { _ in "valid" } == .success("valid"))
        let wrongBundle = try mock("wrongBundleId")
        guard case .success(let verified) = Self.verifyJWS(wrongBundle, with: try verifier()) else {
            Issue.record("wrongBundleId did not verify")
            return
        }
        #expect(verified.signedDateMilliseconds == nil)       // no signedDate: checked at the clock's time
    }

    @Test func missingX5CHeaderClaim() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        #expect(try verifier().verifyAndDecodeTransaction(mock("missingX5CHeaderClaim")).code == "missing-x5c")
    }

    @Test func malformedJWTs() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        #expect(try verifier().verifyAndDecodeTransaction("a.b.c.d").code == "malformed-jws")
        #expect(try verifier().verifyAndDecodeTransaction("a.b.c").code == "invalid-base64url")
        #expect(try verifier().verifyAndDecodeTransaction(mock("legacyTransaction")).code == "malformed-jws")
    }

    @Test func xcodeSignedDataIsRejected() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let transaction = try Vectors.text(Self.base + "xcode/xcode-signed-transaction")
        let renewal = try Vectors.text(Self.base + "xcode/xcode-signed-renewal-info")
        // Apple, Sandbox/Production verifier: INVALID_CHAIN_LENGTH.
        #expect(try verifier().verifyAndDecodeTransaction(transaction).code == "invalid-chain-length")
        #expect(try verifier(environment: .production).verifyAndDecodeRenewalInfo(renewal).code == "invalid-chain-length")
        // Apple in XCODE mode skips all checks and accepts; we never skip the chain (stricter).
        #expect(try verifier(allowedTestEnvironments: [.xcode]).verifyAndDecodeTransaction(transaction).code == "invalid-chain-length")
    }

    // MARK: x509_test_constants (effective date 2025-11-01, strict off)

    private func der(_ name: String) throws -> [UInt8] { try Vectors.bytes(Self.base + "x509_test_constants/\(name).der") }
    private static let effective: Int64 = 1_761_962_975_000

    private func chainVerifier(root: String = "root_ca", strict: Bool = false) throws -> ChainVerifier {
        ChainVerifier(trustAnchors: [try X509Certificate(der: der(root))], strict: strict)
    }

    private func chainCode(_ names: [String], root: String = "root_ca", strict: Bool = false,
                           at milliseconds: Int64 = effective) throws -> String {
        let chain = try names.map { try der($0) }
        let verifier = try chainVerifier(root: root, strict: strict)
        do throws(VerificationError) {
            try verifier.verify(x5c: chain).checkValidity(atMilliseconds: milliseconds)
            return "valid"
        } catch {
            return error.reason.code
        }
    }

    @Test func x509ChainVerdicts() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        #expect(try chainCode(["leaf_cert", "intermediate_ca", "root_ca"]) == "valid")
        #expect(try chainCode(["leaf_cert_for_intermediate_ca_invalid_oid", "intermediate_ca_invalid_oid", "root_ca"]) == "missing-apple-oid")
        #expect(try chainCode(["leaf_cert_invalid_oid", "intermediate_ca", "root_ca"]) == "missing-apple-oid")
        #expect(try chainCode(["intermediate_ca", "root_ca"]) == "invalid-chain-length")
        #expect(try chainCode(["leaf_cert", "intermediate_ca", "root_ca"], root: "real_apple_root") == "untrusted-root")
        #expect(try chainCode(["leaf_cert", "intermediate_ca", "root_ca"], at: 2_280_946_846_000) == "certificate-expired")
        #expect(try chainCode(["real_apple_signing_certificate", "real_apple_intermediate", "real_apple_root"],
                              root: "real_apple_root", strict: true) == "valid")
        #expect(try chainCode(["real_apple_signing_certificate", "real_apple_intermediate", "real_apple_root"],
                              root: "real_apple_root", strict: true, at: 1_900_000_000_000) == "certificate-expired")
    }

    @Test func invalidCertificateData() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let verifier = try chainVerifier()
        let rest = [try der("intermediate_ca"), try der("root_ca")]
        do throws(VerificationError) {
            _ = try verifier.verify(x5c: [Array("abc".utf8)] + rest)
            Issue.record("accepted garbage")
        } catch {
            #expect(error.reason == .invalidCertificate)
        }
        // A malformed trust anchor is a configuration error.
        #expect(throws: X509CertificateError.self) { try X509Certificate(der: Array("abc".utf8)) }
    }
}
