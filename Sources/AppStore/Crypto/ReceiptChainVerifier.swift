import COpenSSL

/// Verifies the certificate chain of an app receipt against configured trust anchors with
/// OpenSSL, independent of time (the result is cached; each receipt's creation date is compared
/// with the windows afterwards, ``VerifiedChain/checkValidity(atMilliseconds:)``).
///
/// Policy, matched to the real receipts in `shared/vectors/apple/receipts` (2015–2025):
/// - The path is built by `X509_verify_cert` from the signer certificate, with **only the
///   configured anchors trusted** and every embedded certificate merely untrusted. Receipts carry
///   a copy of Apple Inc. Root; it is never trusted by itself: a chain ends in a configured anchor
///   or fails (`untrusted-root`, e.g. Xcode's self-signed "StoreKit" certificate).
/// - The verified path must be exactly leaf <- intermediate <- anchor (`invalid-chain`), the shape
///   of every App Store receipt (receipt-signing leaf <- Apple WWDR G1 or G5 <- Apple Inc. Root).
/// - The intermediate must carry Apple's WWDR marker `1.2.840.113635.100.6.2.1` and the leaf the
///   receipt-signing marker `1.2.840.113635.100.6.11.1` (`missing-apple-oid`). Both are present on
///   every real receipt certificate (WWDR G1 2008 and 2013 issues, G5; the "Mac App Store Receipt
///   Signing" and "Mac App Store and iTunes Store Receipt Signing" leaves), exactly as in the JWS
///   policy.
/// - `X509_V_FLAG_X509_STRICT` when configured (real chains pass it) and
///   `X509_V_FLAG_NO_CHECK_TIME` (time is checked per receipt against its creation date).
/// - **Authentication security level 0**, set explicitly: receipts created before 2023 are
///   signed by SHA-1 certificates (WWDR G1, and Apple Inc. Root signs itself with SHA-1). OpenSSL
///   3 rates SHA-1 signatures at 63 bits, so any level >= 1 rejects them ("CA signature digest
///   algorithm too weak"), and so would a distribution `openssl.cnf` that raises the default.
///   Those receipts (r3, r4 in the vectors) are genuine: Apple signed them when SHA-1 was the
///   norm. Forging with SHA-1 would need Apple to sign an attacker-shaped SHA-1 certificate now
///   (a chosen-prefix collision), and Apple's CAs no longer issue SHA-1 certificates; the path
///   shape and OID checks still apply. Deployments that want to refuse them can drop old receipts
///   by creation date.
final class ReceiptChainVerifier: Sendable {
    let trustAnchors: [X509Certificate]
    let strict: Bool

    init(trustAnchors: [X509Certificate], strict: Bool) {
        self.trustAnchors = trustAnchors
        self.strict = strict
    }

    /// Verifies the chain from the container's signer to a trust anchor.
    /// - Parameter container: The parsed receipt envelope.
    /// - Returns: The verified chain (leaf, intermediate, anchor) and its validity windows.
    /// - Throws: ``VerificationError`` `invalid-receipt` (signer not embedded), `untrusted-root`,
    ///   `invalid-chain`, `missing-apple-oid`, `invalid-certificate`.
    func verify(_ container: PKCS7Container) throws(VerificationError) -> VerifiedChain {
        defer { ERR_clear_error() }
        guard let signer = container.signer, let untrusted = container.certificateStack else {
            throw VerificationError(.invalidReceipt, "the signer's certificate is not embedded")
        }
        guard let store = X509_STORE_new() else { throw VerificationError(.invalidChain, "X509_STORE_new failed") }
        defer { X509_STORE_free(store) }
        guard let context = X509_STORE_CTX_new() else { throw VerificationError(.invalidChain, "X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }

        let path: [[UInt8]] = try withExtendedLifetime((container, trustAnchors)) { () throws(VerificationError) -> [[UInt8]] in
            for anchor in trustAnchors where X509_STORE_add_cert(store, anchor.pointer) != 1 {
                throw VerificationError(.invalidChain, "cannot load a trust anchor")
            }
            guard X509_STORE_CTX_init(context, store, signer, untrusted) == 1 else {
                throw VerificationError(.invalidChain, "X509_STORE_CTX_init failed")
            }
            var flags = UInt(X509_V_FLAG_NO_CHECK_TIME)
            if strict { flags |= UInt(X509_V_FLAG_X509_STRICT) }
            X509_STORE_CTX_set_flags(context, flags)
            X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(context), 0)
            guard X509_verify_cert(context) == 1 else {
                let error = X509_STORE_CTX_get_error(context)
                let text = String(cString: X509_verify_cert_error_string(Int(error)))
                switch error {
                case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
                     X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
                    throw VerificationError(.untrustedRoot, "receipt chain does not lead to a configured trust anchor: \(text)")
                default:
                    throw VerificationError(.invalidChain, "receipt chain does not verify: \(text)")
                }
            }
            guard let chain = X509_STORE_CTX_get0_chain(context), COpenSSL_sk_X509_num(chain) == 3 else {
                throw VerificationError(.invalidChain, "verified path is not leaf <- intermediate <- anchor")
            }
            var ders: [[UInt8]] = []
            for index in 0..<3 {
                guard let x509 = COpenSSL_sk_X509_value(chain, Int32(index)), let der = PKCS7Container.derBytes(of: x509) else {
                    throw VerificationError(.invalidCertificate, "unreadable certificate in the verified path")
                }
                ders.append(der)
            }
            return ders
        }

        guard path[0] == container.certificateDER(at: container.signerIndex) else {
            throw VerificationError(.invalidChain, "verified path does not start at the signer")
        }
        guard let anchor = trustAnchors.first(where: { $0.derBytes == path[2] }) else {
            throw VerificationError(.untrustedRoot, "verified path does not end in a configured trust anchor")
        }
        let leaf: X509Certificate
        let intermediate: X509Certificate
        do {
            leaf = try X509Certificate(der: path[0])
            intermediate = try X509Certificate(der: path[1])
        } catch {
            throw VerificationError(.invalidCertificate, "receipt certificate does not re-parse")
        }
        guard intermediate.hasExtension(oid: ChainVerifier.intermediateOID) else {
            throw VerificationError(.missingAppleOID, "intermediate lacks \(ChainVerifier.intermediateOID)")
        }
        guard leaf.hasExtension(oid: ChainVerifier.leafOID) else {
            throw VerificationError(.missingAppleOID, "leaf lacks \(ChainVerifier.leafOID)")
        }
        guard let leafKey = EVPKey.publicKey(of: leaf) else {
            throw VerificationError(.invalidCertificate, "leaf public key is unreadable")
        }
        return VerifiedChain(leafKey: leafKey, certificates: [leaf, intermediate, anchor])
    }
}
