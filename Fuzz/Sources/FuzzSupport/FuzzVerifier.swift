import Foundation
import AppStore
import Pipeline

/// The verifier every JWS target uses, and the invariants its results must satisfy.
///
/// It trusts three fixed roots: the openssl CLI fixture root (`cli/valid.jws` verifies), Apple
/// Root CA - G3 (Apple's vectors verify at their `signedDate`), and a ``pki`` generated at start-up
/// (the segment target re-signs mutated payloads with it). Any bundle id, any environment
/// including `Xcode`/`LocalTesting`, a fixed clock: as many inputs as possible get past the claims.
public enum FuzzVerifier {
    /// The fixed clock: 2026-11-30T06:00:00Z.
    public static let now = Date(timeIntervalSince1970: 1_796_018_400)

    /// A test PKI valid 2001–2099, generated once per process.
    public static let pki: TestPKI = {
        do {
            return try TestPKI.generate(validFrom: Date(timeIntervalSince1970: 978_307_200),
                                        validUntil: Date(timeIntervalSince1970: 4_102_358_400),
                                        commonNamePrefix: "receiptd fuzz")
        } catch {
            fatalError("cannot generate the fuzz test PKI: \(error)")
        }
    }()

    /// The shared verifier.
    public static let verifier: SignedDataVerifier = {
        let configuration = SignedDataVerifierConfiguration(
            trustAnchors: [FuzzFixtures.cliRoot, AppleRootCertificates.appleRootCAG3, pki.root],
            bundleIds: [], environment: .any, allowedTestEnvironments: [.xcode, .localTesting])
        do {
            return try SignedDataVerifier(configuration: configuration, clock: { now })
        } catch {
            fatalError("invalid fuzz verifier configuration: \(error)")
        }
    }()

    /// Reasons that only a bad signature, header or chain produce. A JWS the harness signed itself
    /// with ``pki`` must never be rejected with one of them.
    public static let signatureAndChainReasons: Set<VerificationReason> = [
        .invalidBase64URL, .unsupportedAlgorithm, .forbiddenHeader, .missingX5C, .invalidChainLength,
        .invalidCertificate, .untrustedRoot, .missingAppleOID, .invalidChain, .invalidSignatureFormat, .invalidSignature,
    ]

    /// Checks the invariants of any verification result.
    ///
    /// - valid: only when `validAllowed` (e.g. the input is genuine or was signed by the harness);
    /// - invalid: a documented, non-retryable reason with a non-empty detail that does not echo a
    ///   JWS segment (details never contain the input; at most a 64-character member name).
    /// - Parameters:
    ///   - result: What the verifier answered.
    ///   - jws: The input.
    ///   - validAllowed: Whether a valid result is acceptable for this input.
    public static func check<T>(_ result: VerificationResult<T>, jws: String, validAllowed: Bool) {
        switch result {
        case .valid:
            fuzzCheck(validAllowed, "a JWS that is not genuine verified (\(jws.utf8.count) bytes)")
        case .invalid(let error):
            checkRejection(error, jws: jws)
        }
    }

    /// The invariants of a rejection (see ``check(_:jws:validAllowed:)``).
    public static func checkRejection(_ error: VerificationError, jws: String) {
        fuzzCheck(VerificationReason.allReasons.contains(error.reason), "undocumented reason \(error.reason.code)")
        fuzzCheck(!error.reason.code.isEmpty && !error.detail.isEmpty, "empty reason code or detail: \(error)")
        fuzzCheck(!error.isRetryable, "the offline verifier answered a retryable failure: \(error)")
        for segment in FuzzFixtures.segments(jws) where segment.utf8.count > 64 {
            fuzzCheck(!error.detail.contains(segment), "detail echoes a JWS segment: \(error.detail.prefix(200))")
        }
    }
}
