/// ES256 checks put off by the verifications begun into it, run back to back by ``checkAll()``.
///
/// Verifying one JWS after another interleaves each ECDSA with the parsing around it and with
/// whatever the caller does between calls; grouped, each check runs on the caches and branch
/// predictors the previous one left warm (the verify stage spends about 1 µs less per record,
/// docs/benchmarks.md, session 33). Only the check of a JWS whose chain is cached is put off: a new
/// header still has its signature checked before its chain, so a bad signature never costs a chain
/// verification.
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

    /// Runs every check not run yet, one after the other.
    public func checkAll() {
        while verdicts.count < checks.count {
            let check = checks[verdicts.count]
            let valid = withUnsafeBytes(of: check.signature) { signature in
                withUnsafeBytes(of: check.digest) { check.key.verify(rawES256Signature: signature, digest: $0) }
            }
            verdicts.append(valid)
        }
    }

    /// Whether check `index` passed; ``checkAll()`` must have run since it was added.
    func passed(_ index: Int) -> Bool {
        precondition(index < verdicts.count, "SignatureBatch: checkAll() must run before a verification begun into it is finished")
        return verdicts[index]
    }
}
