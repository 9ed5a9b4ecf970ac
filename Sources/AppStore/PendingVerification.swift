/// A verification begun into a ``SignatureBatch``: everything is checked but, when its chain was
/// cached, its ES256 signature, which waits in the batch. ``SignedDataVerifier/finish(_:in:)``
/// gives the outcome, once, after the batch's checks have run.
///
/// A class: a round holds one per input until the batch is checked, and the decoded payload moves
/// through it instead of being copied (a copy retains each of its strings).
public final class PendingVerification<T: Sendable> {
    private var begun: BegunVerification<T>?

    init(_ begun: consuming BegunVerification<T>) {
        self.begun = begun
    }

    /// Moves the verification out; it is finished once.
    func take() -> BegunVerification<T> {
        guard let begun = begun.take() else { preconditionFailure("a PendingVerification is finished once") }
        return begun
    }
}

/// What beginning a verification found: the value ``PendingVerification`` holds, finished at once
/// on the one-at-a-time path (which so allocates nothing for it).
struct BegunVerification<T: Sendable> {
    /// The outcome of everything but the put-off check.
    var outcome: VerificationResult<T>
    /// The put-off check: the batch it waits in (finishing with another would read another JWS's
    /// verdict) and its index there; nil when none was put off (a cache hit, a new chain, or a
    /// failure before the signature).
    let check: Check?
    /// Where the final outcome goes in the verified-JWS cache; nil for a hit, without a cache, or
    /// for an outcome that read the clock.
    let cacheKey: VerifiedJWSCache.Key?

    struct Check {
        let batch: ObjectIdentifier
        let index: Int
    }
}
