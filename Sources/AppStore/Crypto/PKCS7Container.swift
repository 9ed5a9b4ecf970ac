import COpenSSL

/// A StoreKit 1 app receipt envelope: one PKCS#7 SignedData parsed by OpenSSL (`d2i_PKCS7`, which
/// also accepts the BER indefinite lengths Xcode writes), with its embedded content, certificates
/// and single signer located.
///
/// Shape enforced here (`invalid-receipt` otherwise): the input is exactly one PKCS#7 structure
/// (no trailing bytes); type `signedData`; embedded (not detached), non-empty `id-data` content;
/// at most `maxCertificates` embedded certificates; exactly one SignerInfo. Whether the signer's
/// certificate is embedded is reported in ``signer`` (`nil` otherwise): the chain check requires
/// it, while the cached path parses the envelope re-encoded without certificates (``PKCS7Layout``)
/// and supplies the already verified leaf instead.
///
/// - Important: Owns the `PKCS7*` (freed on `deinit`); the certificate pointers it hands out live
///   as long as the container. Not shared between threads: each receipt gets its own container.
final class PKCS7Container {
    private let pointer: UnsafeMutablePointer<PKCS7>
    /// `STACK_OF(X509)` of the embedded certificates (owned by ``pointer``), `nil` when there are none.
    let certificateStack: OpaquePointer?
    /// Number of embedded certificates.
    let certificateCount: Int
    /// Index of the signer's certificate in ``certificateStack`` (0 when not embedded).
    let signerIndex: Int
    /// The signer's embedded `X509*` (owned by ``pointer``), `nil` when it is not embedded.
    let signer: OpaquePointer?
    /// The signed `id-data` content (the receipt attribute SET).
    let content: [UInt8]

    /// Parses a DER (or BER) PKCS#7 receipt.
    /// - Parameters:
    ///   - der: The decoded receipt bytes.
    ///   - maxCertificates: Upper bound on embedded certificates (bounds chain-building work).
    /// - Throws: ``VerificationError`` `invalid-receipt`.
    init(der: [UInt8], maxCertificates: Int) throws(VerificationError) {
        defer { ERR_clear_error() }
        let parsed: UnsafeMutablePointer<PKCS7>? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let p7 = d2i_PKCS7(nil, &cursor, buffer.count) else { return nil }
            guard cursor == base + buffer.count else {
                PKCS7_free(p7)
                return nil
            }
            return p7
        }
        guard let parsed else { throw Self.invalid("not a single DER/BER PKCS#7 structure") }
        do throws(VerificationError) {
            let facts = try Self.inspect(parsed, maxCertificates: maxCertificates)
            pointer = parsed
            certificateStack = facts.stack
            certificateCount = facts.count
            signerIndex = facts.signerIndex
            signer = facts.signer
            content = facts.content
        } catch {
            PKCS7_free(parsed)
            throw error
        }
    }

    deinit {
        PKCS7_free(pointer)
    }

    private struct Facts {
        let stack: OpaquePointer?
        let count: Int
        let signerIndex: Int
        let signer: OpaquePointer?
        let content: [UInt8]
    }

    private static func inspect(_ p7: UnsafeMutablePointer<PKCS7>, maxCertificates: Int) throws(VerificationError) -> Facts {
        guard COpenSSL_PKCS7_type_is_signed(p7) == 1, let signed = p7.pointee.d.sign else {
            throw invalid("PKCS#7 content type is not signedData")
        }
        guard COpenSSL_PKCS7_get_detached(p7) == 0, let inner = signed.pointee.contents,
              COpenSSL_PKCS7_type_is_data(inner) == 1 else {
            throw invalid("signed content is not embedded id-data")
        }
        guard let octets = inner.pointee.d.data, ASN1_STRING_length(octets) > 0,
              let bytes = ASN1_STRING_get0_data(octets) else {
            throw invalid("signed content is empty")
        }
        let content = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(octets))))

        guard let infos = PKCS7_get_signer_info(p7), COpenSSL_sk_PKCS7_SIGNER_INFO_num(infos) == 1 else {
            throw invalid("expected exactly one signer")
        }
        guard let stack = signed.pointee.cert, COpenSSL_sk_X509_num(stack) > 0 else {
            return Facts(stack: nil, count: 0, signerIndex: 0, signer: nil, content: content)
        }
        let count = Int(COpenSSL_sk_X509_num(stack))
        guard count <= maxCertificates else {
            throw invalid("\(count) embedded certificates, limit \(maxCertificates)")
        }
        guard let signers = PKCS7_get0_signers(p7, nil, 0) else {
            return Facts(stack: stack, count: count, signerIndex: 0, signer: nil, content: content)
        }
        defer { COpenSSL_sk_X509_free(signers) }
        guard COpenSSL_sk_X509_num(signers) == 1, let signer = COpenSSL_sk_X509_value(signers, 0),
              let index = (0..<count).first(where: { COpenSSL_sk_X509_value(stack, Int32($0)) == signer }) else {
            return Facts(stack: stack, count: count, signerIndex: 0, signer: nil, content: content)
        }
        return Facts(stack: stack, count: count, signerIndex: index, signer: signer, content: content)
    }

    /// The DER encoding of the embedded certificate at `index`.
    func certificateDER(at index: Int) -> [UInt8] {
        withExtendedLifetime(self) {
            guard let certificateStack, index >= 0, index < certificateCount else { return [] }
            return COpenSSL_sk_X509_value(certificateStack, Int32(index)).flatMap(Self.derBytes(of:)) ?? []
        }
    }

    /// The exact identity of the chain material: the signer's index followed by every embedded
    /// certificate's DER, each prefixed by its 4-byte length. Two receipts with equal keys carry
    /// the same certificates and name the same one as signer, so a chain verified for one holds
    /// for the other.
    var chainKey: [UInt8] {
        var key: [UInt8] = [UInt8(truncatingIfNeeded: signerIndex)]
        for index in 0..<certificateCount {
            let der = certificateDER(at: index)
            let length = UInt32(truncatingIfNeeded: der.count)
            key.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
            key.append(contentsOf: der)
        }
        return key
    }

    /// Verifies the signer's signature over the content (and over the signed attributes with their
    /// message digest, when present) with OpenSSL's `PKCS7_verify` in `PKCS7_NOVERIFY` mode: the
    /// certificate chain is checked separately by ``ReceiptChainVerifier``.
    ///
    /// Digests: SHA-1 (receipts signed before 2023) and SHA-256/384/512; anything else (MD5) is
    /// refused before OpenSSL is asked.
    /// - Parameter signer: The already verified leaf to check against, with `PKCS7_NOINTERN`: the
    ///   SignerInfo must name exactly this certificate. `nil` uses the embedded signer.
    /// - Throws: ``VerificationError`` `receipt-signature-invalid`.
    func verifySignature(signer: X509Certificate? = nil) throws(VerificationError) {
        defer { ERR_clear_error() }
        try withExtendedLifetime((self, signer)) { () throws(VerificationError) in
            guard let infos = PKCS7_get_signer_info(pointer), let info = COpenSSL_sk_PKCS7_SIGNER_INFO_value(infos, 0),
                  let algorithm = info.pointee.digest_alg?.pointee.algorithm else {
                throw VerificationError(.receiptSignatureInvalid, "signer info without digest algorithm")
            }
            let digest = OBJ_obj2nid(algorithm)
            guard [NID_sha1, NID_sha256, NID_sha384, NID_sha512].contains(digest) else {
                throw VerificationError(.receiptSignatureInvalid, "unsupported digest algorithm (nid \(digest))")
            }
            guard let signer else {
                guard self.signer != nil, PKCS7_verify(pointer, nil, nil, nil, nil, PKCS7_NOVERIFY) == 1 else {
                    throw VerificationError(.receiptSignatureInvalid, "PKCS#7 signature does not verify with the signer certificate")
                }
                return
            }
            guard let stack = COpenSSL_sk_X509_new_null() else {
                throw VerificationError(.receiptSignatureInvalid, "sk_X509_new_null failed")
            }
            defer { COpenSSL_sk_X509_free(stack) }
            guard COpenSSL_sk_X509_push(stack, signer.pointer) > 0,
                  PKCS7_verify(pointer, stack, nil, nil, nil, PKCS7_NOVERIFY | PKCS7_NOINTERN) == 1 else {
                throw VerificationError(.receiptSignatureInvalid, "PKCS#7 signature does not verify with the cached signer certificate")
            }
        }
    }

    /// The DER encoding of an `X509*` (for a certificate parsed from DER: the input bytes).
    static func derBytes(of x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? der : nil
    }

    private static func invalid(_ detail: String) -> VerificationError {
        VerificationError(.invalidReceipt, detail)
    }
}
