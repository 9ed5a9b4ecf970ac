import COpenSSL

/// Verifies an `x5c` chain (leaf, intermediate, root) against configured trust anchors with
/// OpenSSL, independent of time: the result is cached and each message's date is compared to the
/// windows afterwards (``VerifiedChain/checkValidity(atMilliseconds:)``).
///
/// Order of checks: chain length, DER parsing, root identity (`x5c[2]` must be byte-identical to a
/// trust anchor; the root inside `x5c` is never trusted by itself), leaf key type (P-256); then,
/// once the caller has checked the message signature with that key, `X509_verify_cert` with
/// `X509_V_FLAG_NO_CHECK_TIME` (and `X509_V_FLAG_X509_STRICT` when strict) over a store holding
/// only that anchor and the intermediate as the only untrusted certificate, exact chain shape and
/// Apple marker OIDs.
final class ChainVerifier: Sendable {
    /// Apple WWDR intermediate marker (`1.2.840.113635.100.6.2.1`).
    static let intermediateOID = "1.2.840.113635.100.6.2.1"
    /// Apple App Store receipt-signing leaf marker (`1.2.840.113635.100.6.11.1`).
    static let leafOID = "1.2.840.113635.100.6.11.1"

    let trustAnchors: [X509Certificate]
    let strict: Bool

    init(trustAnchors: [X509Certificate], strict: Bool) {
        self.trustAnchors = trustAnchors
        self.strict = strict
    }

    /// The header-only part of a chain check: parsed certificates, matched anchor, leaf key.
    struct Candidate: Sendable {
        let leaf: X509Certificate
        let intermediate: X509Certificate
        let anchor: X509Certificate
        let leafKey: EVPKey
    }

    /// Verifies a DER chain completely (``prepare(x5c:)`` then ``complete(_:)``).
    /// - Parameter x5c: DER certificates: leaf, intermediate, root.
    /// - Returns: The verified chain with the leaf key and validity windows.
    /// - Throws: ``VerificationError`` (`invalid-chain-length`, `invalid-certificate`, `untrusted-root`,
    ///   `invalid-chain`, `missing-apple-oid`).
    func verify(x5c: [[UInt8]]) throws(VerificationError) -> VerifiedChain {
        try complete(try prepare(x5c: x5c))
    }

    /// Cheap checks: chain length, DER parsing, root identity, leaf key type. The caller verifies
    /// the message signature with ``Candidate/leafKey`` before paying for ``complete(_:)``.
    /// - Throws: ``VerificationError`` (`invalid-chain-length`, `invalid-certificate`, `untrusted-root`).
    func prepare(x5c: [[UInt8]]) throws(VerificationError) -> Candidate {
        guard x5c.count == 3 else {
            throw VerificationError(.invalidChainLength, "x5c holds \(x5c.count) certificates, expected 3")
        }
        var parsed: [X509Certificate] = []
        for (index, der) in x5c.enumerated() {
            do {
                parsed.append(try X509Certificate(der: der))
            } catch {
                throw VerificationError(.invalidCertificate, "x5c[\(index)] is not a DER certificate")
            }
        }
        guard let anchor = trustAnchors.first(where: { $0.derBytes == x5c[2] }) else {
            throw VerificationError(.untrustedRoot, "x5c[2] is not a configured trust anchor")
        }
        guard let key = EVPKey.publicKey(of: parsed[0]), key.isP256 else {
            ERR_clear_error()
            throw VerificationError(.invalidCertificate, "leaf key is not EC P-256")
        }
        return Candidate(leaf: parsed[0], intermediate: parsed[1], anchor: anchor, leafKey: key)
    }

    /// Expensive checks: chain signatures and constraints (OpenSSL, time ignored), exact path,
    /// Apple marker OIDs.
    /// - Throws: ``VerificationError`` (`invalid-chain`, `missing-apple-oid`).
    func complete(_ candidate: Candidate) throws(VerificationError) -> VerifiedChain {
        try verifySignatures(leaf: candidate.leaf, intermediate: candidate.intermediate, anchor: candidate.anchor)
        guard candidate.intermediate.hasExtension(oid: Self.intermediateOID) else {
            throw VerificationError(.missingAppleOID, "intermediate lacks \(Self.intermediateOID)")
        }
        guard candidate.leaf.hasExtension(oid: Self.leafOID) else {
            throw VerificationError(.missingAppleOID, "leaf lacks \(Self.leafOID)")
        }
        return VerifiedChain(leafKey: candidate.leafKey,
                             certificates: [candidate.leaf, candidate.intermediate, candidate.anchor])
    }

    private func verifySignatures(leaf: X509Certificate, intermediate: X509Certificate,
                                  anchor: X509Certificate) throws(VerificationError) {
        defer { ERR_clear_error() }
        guard let store = X509_STORE_new() else { throw VerificationError(.invalidChain, "X509_STORE_new failed") }
        defer { X509_STORE_free(store) }
        guard let context = X509_STORE_CTX_new() else { throw VerificationError(.invalidChain, "X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = COpenSSL_sk_X509_new_null() else { throw VerificationError(.invalidChain, "sk_X509_new_null failed") }
        defer { COpenSSL_sk_X509_free(untrusted) }

        // The store and the stack keep plain pointers; the X509Certificate owners outlive this call.
        let outcome: (ok: Bool, error: Int32, chainCount: Int32, chainMiddleMatches: Bool) =
            withExtendedLifetime((leaf, intermediate, anchor)) {
                guard X509_STORE_add_cert(store, anchor.pointer) == 1,
                      COpenSSL_sk_X509_push(untrusted, intermediate.pointer) > 0,
                      X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
                    return (false, -1, 0, false)
                }
                var flags = UInt(X509_V_FLAG_NO_CHECK_TIME)
                if strict { flags |= UInt(X509_V_FLAG_X509_STRICT) }
                X509_STORE_CTX_set_flags(context, flags)
                let verified = X509_verify_cert(context) == 1
                let error = X509_STORE_CTX_get_error(context)
                guard verified, let chain = X509_STORE_CTX_get0_chain(context) else { return (false, error, 0, false) }
                let count = COpenSSL_sk_X509_num(chain)
                let middle = count == 3 ? COpenSSL_sk_X509_value(chain, 1) : nil
                let matches = middle.map { X509_cmp($0, intermediate.pointer) == 0 } ?? false
                return (true, error, count, matches)
            }
        guard outcome.ok else {
            let reason = outcome.error >= 0 ? String(cString: X509_verify_cert_error_string(Int(outcome.error))) : "setup failed"
            throw VerificationError(.invalidChain, "chain does not verify: \(reason)")
        }
        guard outcome.chainCount == 3, outcome.chainMiddleMatches else {
            throw VerificationError(.invalidChain, "verified path is not leaf <- x5c[1] <- x5c[2]")
        }
    }
}
