/// ES256 checks put off by the verifications begun into it, run together by ``checkAll()``.
///
/// Together, the checks share the two modular inversions each would pay alone
/// (``P256BatchVerification``: about 9 µs less per signature here), and each runs on the caches
/// and branch predictors the previous one left warm, where verifying one JWS after another
/// interleaves each ECDSA with the parsing around it (docs/benchmarks.md, sessions 33 and 36).
/// Only the check of a JWS whose chain is cached is put off: a new header still has its signature
/// checked before its chain, so a bad signature never costs a chain verification.
///
/// One batch serves one caller's round: begin verifications into it
/// (``SignedDataVerifier/beginTransaction(utf8:deferringTo:)`` and its siblings), call
/// ``checkAll()``, then ``SignedDataVerifier/finish(_:in:)`` each. Not thread-safe.
public final class SignatureBatch {
    /// One put-off check: the leaf key, the signature `r‖s` and the signing input's digest.
    private struct Check {
        let key: EVPKey
        let signature: (r: P256BatchVerification.Words, s: P256BatchVerification.Words)
        let digest: P256BatchVerification.Words
    }

    private var checks: [Check] = []
    /// The outcome of each check run so far, in the order they were added.
    private var verdicts: [Bool] = []

    /// - Parameter capacity: the checks expected (one per JWS begun with a cached chain).
    public init(capacity: Int = 0) {
        checks.reserveCapacity(capacity)
        verdicts.reserveCapacity(capacity)
    }

    /// Checks added so far.
    var count: Int { checks.count }

    /// Puts off checking a 64-byte `r‖s` signature over a 32-byte digest with `key`.
    func add(key: EVPKey, signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) {
        precondition(signature.count == 64 && digest.count == 32, "an ES256 check is 64 signature bytes and a SHA-256 digest")
        checks.append(Check(key: key, signature: (P256BatchVerification.words(signature[0..<32]),
                                                  P256BatchVerification.words(signature[32..<64])),
                            digest: P256BatchVerification.words(digest)))
    }

    /// Runs every check not run yet: those of P-256 keys together (``P256BatchVerification``)
    /// when there are two or more, any other one by one, as does every check of a batch OpenSSL
    /// could not run. A lone check runs alone: the batch's one inversion (`BN_mod_inverse`, about
    /// 13 µs here) costs more than the two a lone check pays inside OpenSSL; from two checks on,
    /// the batch is cheaper (`bench verify --batch 2`: 61.6 µs per JWS against 62.7 alone).
    public func checkAll() {
        let pending = checks[verdicts.count...]
        // The P-256 checks, by their offset among the pending ones.
        var together: [P256BatchVerification.Check] = [], offsets: [Int] = []
        for (offset, check) in pending.enumerated() {
            guard let point = check.key.p256Point else { continue }
            together.append(P256BatchVerification.Check(point: point, r: check.signature.r, s: check.signature.s,
                                                        digest: check.digest))
            offsets.append(offset)
        }
        var batched = [Bool?](repeating: nil, count: pending.count)
        if together.count >= 2, let valid = P256BatchVerification.verify(together) {
            for (offset, verdict) in zip(offsets, valid) { batched[offset] = verdict }
        }
        for (offset, check) in pending.enumerated() {
            verdicts.append(batched[offset] ?? withUnsafeBytes(of: check.signature) { signature in
                withUnsafeBytes(of: check.digest) { check.key.verify(rawES256Signature: signature, digest: $0) }
            })
        }
    }

    /// Whether check `index` passed; ``checkAll()`` must have run since it was added.
    func passed(_ index: Int) -> Bool {
        precondition(index < verdicts.count, "SignatureBatch: checkAll() must run before a verification begun into it is finished")
        return verdicts[index]
    }
}
