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
    typealias Words = (UInt64, UInt64, UInt64, UInt64)

    /// One put-off check: the leaf key, the signature `r‖s` and the signing input's digest.
    private struct Check {
        let key: EVPKey
        var signature: (Words, Words)
        var digest: Words
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
        var check = Check(key: key, signature: ((0, 0, 0, 0), (0, 0, 0, 0)), digest: (0, 0, 0, 0))
        withUnsafeMutableBytes(of: &check.signature) { $0.copyMemory(from: signature) }
        withUnsafeMutableBytes(of: &check.digest) { $0.copyMemory(from: digest) }
        checks.append(check)
    }

    /// Runs every check not run yet: those of P-256 keys together (``P256BatchVerification``)
    /// when there are two or more, any other one by one, as does every check of a batch OpenSSL
    /// could not run. A lone check runs alone: the batch's one inversion (`BN_mod_inverse`, about
    /// 13 µs here) costs more than the two a lone check pays inside OpenSSL; from two checks on,
    /// the batch is cheaper (`bench verify --batch 2`: 61.6 µs per JWS against 62.7 alone).
    public func checkAll() {
        guard verdicts.count < checks.count else { return }
        let pending = checks[verdicts.count...]
        var together: [P256BatchVerification.Check] = [], positions: [Int] = []
        together.reserveCapacity(pending.count)
        positions.reserveCapacity(pending.count)
        for index in pending.indices {
            guard let point = checks[index].key.p256Point else { continue }
            let check = checks[index]
            together.append(P256BatchVerification.Check(point: point, r: check.signature.0, s: check.signature.1,
                                                        digest: check.digest))
            positions.append(index)
        }
        var outcomes = [Bool?](repeating: nil, count: pending.count)
        if together.count >= 2, let batched = P256BatchVerification.verify(together) {
            for (position, valid) in zip(positions, batched) { outcomes[position - pending.startIndex] = valid }
        }
        for index in pending.indices {
            if let valid = outcomes[index - pending.startIndex] {
                verdicts.append(valid)
                continue
            }
            let check = checks[index]
            verdicts.append(withUnsafeBytes(of: check.signature) { signature in
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
