import Foundation
import Observability
import Synchronization

/// The payload-agnostic core shared by every signed App Store type (transactions, renewal infos,
/// notifications, app transactions): compact JWS syntax, header policy, cached chain verification,
/// ES256 signature, strict JSON payload, and chain validity at the payload's date.
///
/// Per message the work is: one scan for the dots, base64url decoding of payload and signature,
/// one seeded hash plus one `memcmp` of the header segment to find the cached chain, one SHA-256
/// over the signing input, one ECDSA P-256 verification, the JSON parse of the payload, and a
/// comparison of the effective date with the three cached validity windows.
///
/// - Important: Thread-safe: the only shared mutable state is ``ChainCache`` (behind `Mutex`) and
///   an atomic counter; OpenSSL objects are used read-only with per-call contexts.
final class JWSVerifier: Sendable {
    /// A verified JWS: the chain it was signed with and its JSON payload.
    struct Verified: Sendable {
        let chain: VerifiedChain
        let payload: JSONObject
        /// The payload's date member (e.g. `signedDate`) in ms, when present.
        let signedDateMilliseconds: Int64?
        /// The instant the chain was checked at: the payload date, else the clock.
        let effectiveDateMilliseconds: Int64
    }

    let limits: SignedDataVerifierConfiguration.Limits
    let dateRange: ClosedRange<Int64>
    let chainVerifier: ChainVerifier
    let cache: ChainCache
    let clock: @Sendable () -> Date
    /// Number of headers parsed and chains verified from scratch (cache misses), for tests.
    let chainBuildCount = Atomic<Int>(0)

    /// Current value of ``chainBuildCount``.
    var chainBuilds: Int { chainBuildCount.load(ordering: .relaxed) }

    init(configuration: SignedDataVerifierConfiguration, clock: @escaping @Sendable () -> Date) {
        self.limits = configuration.limits
        self.dateRange = configuration.limits.dateRange
        self.chainVerifier = ChainVerifier(trustAnchors: configuration.trustAnchors,
                                           strict: configuration.strictCertificateChecks)
        self.cache = ChainCache(capacity: configuration.limits.chainCacheCapacity,
                                failureCapacity: configuration.limits.rejectedHeaderCacheCapacity)
        self.clock = clock
    }

    /// Verifies a compact JWS.
    /// - Parameters:
    ///   - bytes: The compact serialization's UTF-8.
    ///   - dateMembers: Payload members holding the signing date, first present wins
    ///     (`signedDate`; app transactions add `receiptCreationDate`).
    ///   - clockUse: set when the outcome depended on the clock (no date member: the chain was
    ///     checked at the current time), so the outcome must not be cached.
    ///   - signingInput: the digest of the signing input when already computed (with the
    ///     verified-JWS cache's key), else it is computed here.
    ///   - batch: where to put off the signature check when the chain is cached (then the outcome
    ///     stands only if that check passes); nil checks it here.
    /// - Returns: The verified chain and payload; throws the first failure.
    func verify(bytes: UnsafeBufferPointer<UInt8>, dateMembers: [String], clockUse: ClockUse? = nil,
                signingInput precomputed: SigningInputDigest? = nil,
                deferringTo batch: SignatureBatch? = nil) throws(VerificationError) -> Verified {
        guard bytes.count <= limits.maxJWSBytes else {
            throw VerificationError(.tooLarge, "JWS is \(bytes.count) bytes, limit \(limits.maxJWSBytes)")
        }
        let (firstDot, secondDot) = try Self.segmentBoundaries(bytes)
        let header = UnsafeBufferPointer(rebasing: bytes[0..<firstDot])
        let payload = UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])
        let signature = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
        guard header.count <= limits.maxHeaderBytes else {
            throw VerificationError(.tooLarge, "header segment is \(header.count) bytes, limit \(limits.maxHeaderBytes)")
        }
        guard payload.count <= limits.maxPayloadBytes else {
            throw VerificationError(.tooLarge, "payload segment is \(payload.count) bytes, limit \(limits.maxPayloadBytes)")
        }
        guard let payloadBytes = Base64URL.decode(payload) else {
            throw VerificationError(.invalidBase64URL, "payload segment is not canonical base64url")
        }
        let chain = try chain(forHeader: header) { key, cached throws(VerificationError) in
            try verifySignature(signature, signingInput: UnsafeBufferPointer(rebasing: bytes[0..<secondDot]), key: key,
                                precomputed: precomputed, deferringTo: cached ? batch : nil)
        }

        guard case .object(let object) = try JSONParser.parse(payloadBytes, maxDepth: limits.maxJSONDepth) else {
            throw VerificationError(.invalidJSON, "payload is not a JSON object")
        }
        var signedDate: Int64?
        for member in dateMembers {
            if let date = try object.optionalMilliseconds(member, range: dateRange) {
                signedDate = date
                break
            }
        }
        if signedDate == nil { clockUse?.used = true }
        let effective = signedDate ?? clock().millisecondsSince1970
        try chain.checkValidity(atMilliseconds: effective)
        return Verified(chain: chain, payload: object, signedDateMilliseconds: signedDate, effectiveDateMilliseconds: effective)
    }

    /// Positions of the two dots of a compact JWS with three non-empty segments.
    static func segmentBoundaries(_ bytes: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> (Int, Int) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw VerificationError(.malformedJWS, "empty input") }
        let dot = Int32(UInt8(ascii: "."))
        guard let first = memchr(base, dot, bytes.count) else {
            throw VerificationError(.malformedJWS, "expected three dot-separated segments, found 1")
        }
        let firstIndex = UnsafeRawPointer(first) - UnsafeRawPointer(base)
        let afterFirst = firstIndex + 1
        guard let second = memchr(base + afterFirst, dot, bytes.count - afterFirst) else {
            throw VerificationError(.malformedJWS, "expected three dot-separated segments, found 2")
        }
        let secondIndex = UnsafeRawPointer(second) - UnsafeRawPointer(base)
        let afterSecond = secondIndex + 1
        if afterSecond < bytes.count, memchr(base + afterSecond, dot, bytes.count - afterSecond) != nil {
            throw VerificationError(.malformedJWS, "expected three dot-separated segments, found more")
        }
        guard firstIndex > 0, secondIndex > afterFirst, afterSecond < bytes.count else {
            throw VerificationError(.malformedJWS, "empty segment")
        }
        return (firstIndex, secondIndex)
    }

    /// The verified chain of a header segment, with the message signature checked by `checkSignature`
    /// (told whether the chain came from the cache).
    ///
    /// On a cache hit the signature is checked with the cached leaf key. On a miss, the header-only
    /// checks run first (failures are cached), then the signature (failures are *not* cached: they
    /// depend on the message), then the full chain verification, whose outcome is cached.
    func chain(forHeader header: UnsafeBufferPointer<UInt8>,
               checkSignature: (EVPKey, _ cached: Bool) throws(VerificationError) -> Void) throws(VerificationError) -> VerifiedChain {
        let key = ChainCache.key(for: header)
        switch cache.lookup(key: key, header: header) {
        case .verified(let chain)?:
            try checkSignature(chain.leafKey, true)
            return chain
        case .rejected(let error)?:
            throw error
        case nil:
            break
        }
        chainBuildCount.add(1, ordering: .relaxed)
        let candidate: ChainVerifier.Candidate
        do throws(VerificationError) {
            guard let decoded = Base64URL.decode(header) else {
                throw VerificationError(.invalidBase64URL, "header segment is not canonical base64url")
            }
            candidate = try chainVerifier.prepare(x5c: try JWSHeader.parse(decoded, maxDepth: limits.maxJSONDepth).x5c)
        } catch {
            cache.store(key: key, header: header, outcome: .rejected(error))
            throw error
        }
        try checkSignature(candidate.leafKey, false)
        do throws(VerificationError) {
            let chain = try chainVerifier.complete(candidate)
            cache.store(key: key, header: header, outcome: .verified(chain))
            return chain
        } catch {
            cache.store(key: key, header: header, outcome: .rejected(error))
            throw error
        }
    }

    /// What an ES256 signature that does not verify is rejected with, checked here or in a batch.
    static var signatureDoesNotVerify: VerificationError {
        VerificationError(.invalidSignature, "ES256 signature does not verify with the leaf key")
    }

    private func verifySignature(_ segment: UnsafeBufferPointer<UInt8>, signingInput: UnsafeBufferPointer<UInt8>,
                                 key: EVPKey, precomputed: SigningInputDigest?,
                                 deferringTo batch: SignatureBatch?) throws(VerificationError) {
        guard Base64URL.decodedCount(forEncodedCount: segment.count) == ES256.rawSignatureCount else {
            guard Base64URL.decode(segment) != nil else {
                throw VerificationError(.invalidBase64URL, "signature segment is not canonical base64url")
            }
            throw VerificationError(.invalidSignatureFormat,
                                    "signature is not 64 bytes r||s (a DER-encoded ECDSA signature is not accepted)")
        }
        let valid = withUnsafeTemporaryAllocation(byteCount: 96, alignment: 16) { scratch -> Bool? in
            let raw = UnsafeMutableBufferPointer(start: scratch.baseAddress!.assumingMemoryBound(to: UInt8.self), count: 64)
            guard Base64URL.decode(segment, into: raw) else { return nil }
            let digest = scratch.baseAddress! + 64
            if let precomputed, precomputed.length == signingInput.count {
                precomputed.copy(to: digest.assumingMemoryBound(to: UInt8.self))
            } else {
                SHA256Digest.hash(UnsafeRawPointer(signingInput.baseAddress!), count: signingInput.count,
                                  into: digest.assumingMemoryBound(to: UInt8.self))
            }
            let digestBytes = UnsafeRawBufferPointer(start: digest, count: 32)
            if let batch {
                batch.add(key: key, signature: UnsafeRawBufferPointer(raw), digest: digestBytes)
                return true
            }
            return key.verify(rawES256Signature: UnsafeRawBufferPointer(raw), digest: digestBytes)
        }
        guard let valid else { throw VerificationError(.invalidBase64URL, "signature segment is not canonical base64url") }
        guard valid else { throw Self.signatureDoesNotVerify }
    }
}

/// Whether one verification (with its nested ones) read the clock; one per call, never shared.
final class ClockUse {
    var used = false
}
