import Foundation
import Synchronization

/// The stateful part of ``AppReceiptVerifier``: envelope parsing, the cached chain check, the
/// signature, the payload, and chain validity at the effective date.
///
/// Per receipt the work is: strict base64, `d2i_PKCS7`, the chain key (the embedded
/// certificates' DER), one cache lookup, one RSA signature verification over the content, the
/// DER walk of the payload, and a comparison of the effective date with three cached validity
/// windows. `X509_verify_cert` runs only for certificate sets not seen before.
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

    /// Decodes base64 and parses the PKCS#7 envelope (no trust decision).
    /// - Throws: `too-large`, `invalid-base64`, `invalid-receipt`.
    static func open(_ encoded: String, limits: AppReceiptVerifierConfiguration.Limits) throws(VerificationError) -> PKCS7Container {
        let count = encoded.utf8.count
        guard count <= limits.maxReceiptBytes else {
            throw VerificationError(.tooLarge, "receipt is \(count) base64 characters, limit \(limits.maxReceiptBytes)")
        }
        guard let der = Base64.decode(encoded) else {
            throw VerificationError(.invalidBase64, "receipt is not canonical padded base64 (whitespace is not accepted)")
        }
        guard !der.isEmpty else { throw VerificationError(.invalidReceipt, "empty receipt") }
        return try PKCS7Container(der: der, maxCertificates: limits.maxCertificates)
    }

    /// Verifies a receipt's envelope, signature and chain, then decodes and dates it.
    /// - Returns: The decoded receipt (claims are checked by the caller).
    func verify(_ encoded: String) throws(VerificationError) -> AppReceipt {
        let container = try Self.open(encoded, limits: limits)
        let chain = try chain(for: container)
        let receipt = try ReceiptPayloadParser.parse(container.content)
        let effective: Date
        switch validityDate {
        case .receiptCreationDate: effective = receipt.receiptCreationDate ?? clock()
        case .currentTime: effective = clock()
        }
        try chain.checkValidity(atMilliseconds: effective.millisecondsSince1970)
        return receipt
    }

    /// The verified chain of a container, with the signature checked.
    ///
    /// On a cache hit only the signature is verified. On a miss the signature comes first (its
    /// failures depend on the message and are not cached), then the chain, whose outcome is cached
    /// under ``PKCS7Container/chainKey``. Rejected chains live in a separate table, so a flood of
    /// self-signed receipts can never evict Apple's verified chains.
    func chain(for container: PKCS7Container) throws(VerificationError) -> VerifiedChain {
        let keyBytes = container.chainKey
        return try keyBytes.withUnsafeBufferPointer { key throws(VerificationError) -> VerifiedChain in
            let hash = ChainCache.key(for: key)
            switch cache.lookup(key: hash, header: key) {
            case .verified(let chain)?:
                try container.verifySignature()
                return chain
            case .rejected(let error)?:
                throw error
            case nil:
                break
            }
            chainBuildCount.add(1, ordering: .relaxed)
            try container.verifySignature()
            do throws(VerificationError) {
                let chain = try chainVerifier.verify(container)
                cache.store(key: hash, header: key, outcome: .verified(chain))
                return chain
            } catch {
                cache.store(key: hash, header: key, outcome: .rejected(error))
                throw error
            }
        }
    }
}
