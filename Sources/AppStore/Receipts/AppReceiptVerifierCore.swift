import Foundation
import Synchronization

/// The stateful part of ``AppReceiptVerifier``: envelope parsing, the cached chain check, the
/// signature, the payload, and chain validity at the effective date.
///
/// Per receipt (chain cached) the work is: strict base64, a DER walk of the envelope to find the
/// certificates field (the cache key), `d2i_PKCS7` of the envelope without certificates, one RSA
/// signature verification with the cached leaf, the DER walk of the payload, and a comparison of
/// the effective date with three cached validity windows. Certificates are parsed and
/// `X509_verify_cert` runs only for certificate sets not seen before.
///
/// - Important: Thread-safe: the shared mutable state is ``ChainCache`` (behind `Mutex`) and an
///   atomic counter; every OpenSSL object is per call, except the anchors (read-only).
final class AppReceiptVerifierCore: Sendable {
    let limits: AppReceiptVerifierConfiguration.Limits
    let validityDate: AppReceiptVerifierConfiguration.ValidityDate
    let chainVerifier: ReceiptChainVerifier
    let cache: ChainCache
    let clock: @Sendable () -> Date
    /// Chains verified from scratch (cache misses), for tests.
    let chainBuildCount = Atomic<Int>(0)

    /// Current value of ``chainBuildCount``.
    var chainBuilds: Int { chainBuildCount.load(ordering: .relaxed) }

    init(configuration: AppReceiptVerifierConfiguration, clock: @escaping @Sendable () -> Date) {
        limits = configuration.limits
        validityDate = configuration.validityDate
        chainVerifier = ReceiptChainVerifier(trustAnchors: configuration.trustAnchors,
                                             strict: configuration.strictCertificateChecks)
        cache = ChainCache(capacity: configuration.limits.chainCacheCapacity,
                           failureCapacity: configuration.limits.rejectedChainCacheCapacity)
        self.clock = clock
    }

    /// Decodes canonical base64 within the size limit.
    /// - Throws: `too-large`, `invalid-base64`, `invalid-receipt` (empty).
    static func decode(_ encoded: String, limits: AppReceiptVerifierConfiguration.Limits) throws(VerificationError) -> [UInt8] {
        let count = encoded.utf8.count
        guard count <= limits.maxReceiptBytes else {
            throw VerificationError(.tooLarge, "receipt is \(count) base64 characters, limit \(limits.maxReceiptBytes)")
        }
        guard let der = Base64.decode(encoded) else {
            throw VerificationError(.invalidBase64, "receipt is not canonical padded base64 (whitespace is not accepted)")
        }
        guard !der.isEmpty else { throw VerificationError(.invalidReceipt, "empty receipt") }
        return der
    }

    /// Decodes base64 and parses the whole PKCS#7 envelope with OpenSSL (no trust decision).
    /// - Throws: `too-large`, `invalid-base64`, `invalid-receipt`.
    static func open(_ encoded: String, limits: AppReceiptVerifierConfiguration.Limits) throws(VerificationError) -> PKCS7Container {
        try PKCS7Container(der: try decode(encoded, limits: limits), maxCertificates: limits.maxCertificates)
    }

    /// Verifies a receipt's envelope, signature and chain, then decodes and dates it.
    /// - Returns: The decoded receipt (claims are checked by the caller).
    func verify(_ encoded: String) throws(VerificationError) -> AppReceipt {
        let (content, chain) = try signedContent(of: try Self.decode(encoded, limits: limits))
        let receipt = try ReceiptPayloadParser.parse(content)
        let effective: Date
        switch validityDate {
        case .receiptCreationDate: effective = receipt.receiptCreationDate ?? clock()
        case .currentTime: effective = clock()
        }
        try chain.checkValidity(atMilliseconds: effective.millisecondsSince1970)
        return receipt
    }

    /// The signature-checked content of a receipt and its verified chain.
    ///
    /// Cache key: for DER receipts (every App Store receipt), the exact bytes of the
    /// `certificates` field and of the signer's issuer and serial (``PKCS7Layout``); on a hit
    /// OpenSSL parses the envelope without the certificates and checks the signature against the
    /// cached leaf, which the SignerInfo must name (`PKCS7_NOINTERN`). For BER receipts (Xcode),
    /// the key is the signer index plus every certificate's DER after a full parse. On a miss the
    /// signature is checked first (its failures depend on the message and are not cached), then
    /// the chain, whose outcome is cached. Rejected chains live in a separate table, so a flood of
    /// self-signed receipts can never evict Apple's verified chains.
    func signedContent(of der: [UInt8]) throws(VerificationError) -> (content: [UInt8], chain: VerifiedChain) {
        let layout = PKCS7Layout(der: der)
        var container: PKCS7Container?
        let keyBytes: [UInt8]
        if let layout {
            guard layout.certificateCount <= limits.maxCertificates else {
                throw VerificationError(.invalidReceipt, "\(layout.certificateCount) embedded certificates, limit \(limits.maxCertificates)")
            }
            let count = UInt32(truncatingIfNeeded: layout.certificates.count)
            keyBytes = [0, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
                + layout.certificates + layout.signerIdentifier
        } else {
            let full = try PKCS7Container(der: der, maxCertificates: limits.maxCertificates)
            container = full
            keyBytes = [1] + full.chainKey
        }
        return try keyBytes.withUnsafeBufferPointer { key throws(VerificationError) -> ([UInt8], VerifiedChain) in
            let hash = ChainCache.key(for: key)
            switch cache.lookup(key: hash, header: key) {
            case .verified(let chain)?:
                if let container {
                    try container.verifySignature()
                    return (container.content, chain)
                }
                let envelope = try PKCS7Container(der: layout?.withoutCertificates ?? der, maxCertificates: limits.maxCertificates)
                try envelope.verifySignature(signer: chain.certificates[0])
                return (envelope.content, chain)
            case .rejected(let error)?:
                throw error
            case nil:
                break
            }
            chainBuildCount.add(1, ordering: .relaxed)
            let full: PKCS7Container
            if let container {
                full = container
            } else {
                full = try PKCS7Container(der: der, maxCertificates: limits.maxCertificates)
            }
            guard full.signer != nil else {
                throw VerificationError(.invalidReceipt, "the signer's certificate is not embedded")
            }
            try full.verifySignature()
            do throws(VerificationError) {
                let chain = try chainVerifier.verify(full)
                cache.store(key: hash, header: key, outcome: .verified(chain))
                return (full.content, chain)
            } catch {
                cache.store(key: hash, header: key, outcome: .rejected(error))
                throw error
            }
        }
    }
}
