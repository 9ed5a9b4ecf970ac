/// A verification begun into a ``SignatureBatch``: everything is checked but, when its chain was
/// cached, its ES256 signature, which waits in the batch. ``SignedDataVerifier/finish(_:in:)``
/// gives the outcome once the batch's checks have run.
public struct PendingVerification<T: Sendable>: Sendable {
    /// The outcome of everything but the put-off check.
    let outcome: VerificationResult<T>
    /// The put-off check's index in the batch; nil when none was put off (a cache hit, a new
    /// chain, or a failure before the signature).
    let check: Int?
    /// Where the final outcome goes in the verified-JWS cache; nil for a hit, without a cache, or
    /// for an outcome that read the clock.
    let cacheKey: VerifiedJWSCache.Key?
}
