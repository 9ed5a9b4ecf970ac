import Foundation

/// Verifies and decodes StoreKit 1 app receipts (base64 PKCS#7, the receipt an app reads from
/// `Bundle.main.appStoreReceiptURL`) fully offline, on OpenSSL 3.
///
/// Checks, in order:
/// 1. Input: at most ``AppReceiptVerifierConfiguration/Limits/maxReceiptBytes`` characters of
///    canonical padded standard base64 (`invalid-base64`; whitespace is refused: ingest already
///    removes line breaks, and a verifier that guesses at damaged input hides bugs).
/// 2. Envelope (OpenSSL `d2i_PKCS7`): one SignedData, embedded `id-data` content, one signer whose
///    certificate is embedded (`invalid-receipt`).
/// 3. Signature (OpenSSL `PKCS7_verify`, chain check off) with the signer certificate, SHA-1 or
///    SHA-2 (`receipt-signature-invalid`).
/// 4. Chain (``ReceiptChainVerifier``): signer <- Apple WWDR intermediate <- configured anchor,
///    built by `X509_verify_cert` with only the anchors trusted (the receipt's own root copy is
///    never trusted), Apple's OIDs on leaf and intermediate, strict X.509, SHA-1 accepted
///    (`untrusted-root`, `invalid-chain`, `missing-apple-oid`). Cached per exact certificate set.
/// 5. Payload: the DER attribute SET (``ReceiptPayloadParser``; `invalid-receipt`,
///    `invalid-field`, `invalid-date`).
/// 6. Chain validity at the receipt's creation date (or the clock, see
///    ``AppReceiptVerifierConfiguration/validityDate``): `certificate-expired`,
///    `certificate-not-yet-valid`.
/// 7. Claims: bundle id present (`missing-field`) and configured, exactly (`bundle-id-mismatch`);
///    environment from the receipt type (`environment-mismatch`).
///
/// The device hash (attributes 4, 5) cannot be checked on a server and is not.
///
/// - Important: `Sendable` and thread-safe. Synchronous and CPU-bound: with the chain cached, a
///   typical receipt costs one RSA-2048 verification plus parsing (well under a millisecond).
public struct AppReceiptVerifier: Sendable {
    /// The validated configuration.
    public let configuration: AppReceiptVerifierConfiguration
    let core: AppReceiptVerifierCore

    /// Creates a verifier.
    /// - Parameters:
    ///   - configuration: Trust anchors, claims policy, validity date and limits.
    ///   - clock: The current time, used for ``AppReceiptVerifierConfiguration/ValidityDate/currentTime``
    ///     and for receipts without a creation date. Inject a fixed clock in tests.
    /// - Throws: ``AppStoreConfigurationError`` when the configuration is invalid.
    public init(configuration: AppReceiptVerifierConfiguration = AppReceiptVerifierConfiguration(),
                clock: @escaping @Sendable () -> Date = Date.init) throws {
        try configuration.validate()
        self.configuration = configuration
        self.core = AppReceiptVerifierCore(configuration: configuration, clock: clock)
    }

    /// Verifies an app receipt and decodes it.
    /// - Parameter encodedReceipt: The receipt as canonical standard base64.
    /// - Returns: The decoded receipt, or why it was rejected (a ``VerificationReason`` code).
    public func verifyAndDecodeAppReceipt(_ encodedReceipt: String) -> VerificationResult<AppReceipt> {
        do throws(VerificationError) {
            let receipt = try core.verify(encodedReceipt)
            try checkClaims(receipt)
            return .valid(receipt)
        } catch {
            return .invalid(error)
        }
    }

    /// `missing-field`, `bundle-id-mismatch` or `environment-mismatch` unless the claims are accepted.
    func checkClaims(_ receipt: AppReceipt) throws(VerificationError) {
        guard let bundleId = receipt.bundleId else {
            throw VerificationError(.missingField, "receipt has no bundle id (attribute 2)")
        }
        if !configuration.bundleIds.isEmpty && !configuration.bundleIds.contains(bundleId) {
            throw VerificationError(.bundleIdMismatch, "bundle id is not one of the configured bundle ids")
        }
        guard configuration.accepts(environment: receipt.environment) else {
            throw VerificationError(.environmentMismatch,
                                    "receipt type is not accepted by policy \(configuration.environment.rawValue)")
        }
    }

    /// Cache statistics: chains built from scratch, cached verified chains, cached rejected chains.
    @_spi(Testing) public var cacheStatistics: (builds: Int, verified: Int, rejected: Int) {
        let counts = core.cache.counts
        return (core.chainBuilds, counts.verified, counts.rejected)
    }
}
