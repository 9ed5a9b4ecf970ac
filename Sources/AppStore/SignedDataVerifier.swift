import Foundation
import Observability

/// Verifies and decodes StoreKit 2 signed data (compact JWS, ES256, `x5c` chain) fully offline.
///
/// Mirrors Apple's `SignedDataVerifier` on OpenSSL 3, with stricter parsing:
/// 1. Compact JWS syntax, canonical base64url, size limits.
/// 2. Header: `alg` exactly `ES256`, no `jwk`/`jku`/`x5u`/`crit`/`b64`/`zip`/`enc`, `x5c` with
///    exactly three certificates.
/// 3. Chain: `x5c[2]` byte-identical to a configured trust anchor, signatures and CA constraints
///    verified by OpenSSL, Apple's intermediate (`…6.2.1`) and leaf (`…6.11.1`) OIDs present.
///    Steps 2–3 depend only on the header bytes and are cached (see ``SignedDataVerifierConfiguration/Limits``).
/// 4. ES256 signature (`r‖s`, 64 bytes) with the leaf key.
/// 5. Strict JSON payload (duplicate members, depth), dates as integer milliseconds.
/// 6. Chain validity at the payload's `signedDate` (at the injected clock's time when absent).
/// 7. Claims: bundle id, then environment (and `appAppleId` where Apple checks it).
///
/// - Important: `Sendable` and thread-safe; call it from any number of threads or tasks. Every
///   call is synchronous and CPU-bound: one ECDSA P-256 verification plus about 10–15 µs of
///   parsing once the chain is cached (about 0.1 ms); from async code consider a dedicated
///   executor for large batches.
///
/// A class: the verify stage hands it along per submission, which costs one reference count
/// instead of one per member.
public final class SignedDataVerifier: Sendable {
    /// The validated configuration.
    public let configuration: SignedDataVerifierConfiguration
    let core: JWSVerifier
    /// Whole outcomes by the JWS's SHA-256 (nil when disabled).
    let verifiedCache: VerifiedJWSCache?

    /// Creates a verifier.
    /// - Parameters:
    ///   - configuration: Trust anchors, claims policy and limits.
    ///   - clock: The current time, used only for payloads without `signedDate`. Inject a fixed
    ///     clock in tests.
    /// - Throws: ``AppStoreConfigurationError`` when the configuration is invalid.
    public init(configuration: SignedDataVerifierConfiguration, clock: @escaping @Sendable () -> Date = Date.init) throws {
        try configuration.validate()
        self.configuration = configuration
        self.core = JWSVerifier(configuration: configuration, clock: clock)
        let capacity = configuration.limits.verifiedCacheCapacity
        self.verifiedCache = capacity > 0 ? VerifiedJWSCache(capacity: capacity) : nil
    }

    /// Lookups of the verified-JWS cache answered from it, and those that were not (both 0 when
    /// ``SignedDataVerifierConfiguration/Limits/verifiedCacheCapacity`` is 0).
    public var verifiedCacheStatistics: (hits: Int, misses: Int) { verifiedCache?.statistics ?? (0, 0) }

    /// Verifies a signed transaction and decodes it.
    ///
    /// Claims: `bundleId` must be configured (exact), then `environment` must be accepted.
    /// `appAppleId` is not checked for transactions (Apple's rule).
    /// - Parameter signedTransaction: A JWS such as `signedTransactionInfo`.
    /// - Returns: The decoded transaction, or why it was rejected.
    public func verifyAndDecodeTransaction(_ signedTransaction: String) -> VerificationResult<JWSTransactionDecodedPayload> {
        signedTransaction.withUTF8InPlace { verifyAndDecodeTransaction(utf8: $0) }
    }

    /// ``verifyAndDecodeTransaction(_:)`` over the JWS's UTF-8 bytes where they are: a caller that
    /// holds them (a record just read) needs no `String` of them.
    public func verifyAndDecodeTransaction(utf8 signedTransaction: UnsafeBufferPointer<UInt8>) -> VerificationResult<JWSTransactionDecodedPayload> {
        finish(begin(signedTransaction, as: .transaction, deferringTo: nil,
                     transaction(_:clockUse:signingInput:deferringTo:)), in: nil)
    }

    /// ``verifyAndDecodeTransaction(utf8:)`` with its ES256 check put off into `batch` when the chain
    /// is cached: ``finish(_:in:)`` it after `batch.checkAll()`.
    public func beginTransaction(utf8 signedTransaction: UnsafeBufferPointer<UInt8>,
                                 deferringTo batch: SignatureBatch) -> PendingVerification<JWSTransactionDecodedPayload> {
        PendingVerification(begin(signedTransaction, as: .transaction, deferringTo: batch,
                                  transaction(_:clockUse:signingInput:deferringTo:)))
    }

    func transaction(_ signedTransaction: UnsafeBufferPointer<UInt8>, clockUse: ClockUse,
                     signingInput: SigningInputDigest? = nil,
                     deferringTo batch: SignatureBatch? = nil) -> VerificationResult<JWSTransactionDecodedPayload> {
        let dateRange = core.dateRange
        return decode(signedTransaction, clockUse: clockUse, signingInput: signingInput,
                      deferringTo: batch) { json throws(VerificationError) in
            let transaction = try JWSTransactionDecodedPayload(json: json, dateRange: dateRange)
            try checkBundleId(transaction.bundleId)
            try checkEnvironment(transaction.rawEnvironment)
            return transaction
        }
    }

    /// Verifies signed renewal info and decodes it.
    ///
    /// Claims: `environment` only (renewal infos carry no bundle id; Apple's rule).
    /// - Parameter signedRenewalInfo: A JWS such as `signedRenewalInfo`.
    /// - Returns: The decoded renewal info, or why it was rejected.
    public func verifyAndDecodeRenewalInfo(_ signedRenewalInfo: String) -> VerificationResult<JWSRenewalInfoDecodedPayload> {
        signedRenewalInfo.withUTF8InPlace { verifyAndDecodeRenewalInfo(utf8: $0) }
    }

    /// ``verifyAndDecodeRenewalInfo(_:)`` over the JWS's UTF-8 bytes where they are.
    public func verifyAndDecodeRenewalInfo(utf8 signedRenewalInfo: UnsafeBufferPointer<UInt8>) -> VerificationResult<JWSRenewalInfoDecodedPayload> {
        finish(begin(signedRenewalInfo, as: .renewalInfo, deferringTo: nil,
                     renewalInfo(_:clockUse:signingInput:deferringTo:)), in: nil)
    }

    /// ``verifyAndDecodeRenewalInfo(utf8:)`` with its ES256 check put off into `batch` (see
    /// ``beginTransaction(utf8:deferringTo:)``).
    public func beginRenewalInfo(utf8 signedRenewalInfo: UnsafeBufferPointer<UInt8>,
                                 deferringTo batch: SignatureBatch) -> PendingVerification<JWSRenewalInfoDecodedPayload> {
        PendingVerification(begin(signedRenewalInfo, as: .renewalInfo, deferringTo: batch,
                                  renewalInfo(_:clockUse:signingInput:deferringTo:)))
    }

    func renewalInfo(_ signedRenewalInfo: UnsafeBufferPointer<UInt8>, clockUse: ClockUse,
                     signingInput: SigningInputDigest? = nil,
                     deferringTo batch: SignatureBatch? = nil) -> VerificationResult<JWSRenewalInfoDecodedPayload> {
        let dateRange = core.dateRange
        return decode(signedRenewalInfo, clockUse: clockUse, signingInput: signingInput,
                      deferringTo: batch) { json throws(VerificationError) in
            let renewalInfo = try JWSRenewalInfoDecodedPayload(json: json, dateRange: dateRange)
            try checkEnvironment(renewalInfo.rawEnvironment)
            return renewalInfo
        }
    }

    /// Begins verifying `jws` as `kind`: the cached outcome, else `verify`'s (one of `transaction`,
    /// `renewalInfo`, `notification`), whose signature check it may have put off into `batch` (the
    /// last check added meanwhile). A miss hands `verify` the signing input's digest, computed with
    /// the cache's key.
    func begin<T: Sendable>(_ jws: UnsafeBufferPointer<UInt8>, as kind: VerifiedJWSCache.Kind, deferringTo batch: SignatureBatch?,
                            _ verify: (UnsafeBufferPointer<UInt8>, ClockUse, SigningInputDigest?, SignatureBatch?)
                                -> VerificationResult<T>) -> BegunVerification<T> {
        let checksBefore = batch?.count ?? 0
        func putOff() -> BegunVerification<T>.Check? {
            guard let batch, batch.count > checksBefore else { return nil }
            return BegunVerification.Check(batch: ObjectIdentifier(batch), index: batch.count - 1)
        }
        guard let verifiedCache else {
            let outcome = verify(jws, ClockUse(), nil, batch)
            return BegunVerification(outcome: outcome, check: putOff(), cacheKey: nil)
        }
        let (key, signingInput) = VerifiedJWSCache.Key.withSigningInput(jws, kind: kind)
        if let hit = verifiedCache.value(for: key) as? VerificationResult<T> {
            return BegunVerification(outcome: hit, check: nil, cacheKey: nil)
        }
        let clockUse = ClockUse()
        let outcome = verify(jws, clockUse, signingInput, batch)
        return BegunVerification(outcome: outcome, check: putOff(), cacheKey: clockUse.used ? nil : key)
    }

    /// The outcome of a verification begun into `batch`, once `batch.checkAll()` has run: its
    /// put-off signature check decides first (a signature that does not verify is rejected as
    /// `invalid-signature`, as it would have been before anything after it was looked at), then the
    /// outcome of the rest. Stored in the verified-JWS cache unless it read the clock.
    public func finish<T>(_ pending: PendingVerification<T>, in batch: SignatureBatch) -> VerificationResult<T> {
        finish(pending.take(), in: batch)
    }

    func finish<T>(_ begun: consuming BegunVerification<T>, in batch: SignatureBatch?) -> VerificationResult<T> {
        if let check = begun.check {
            guard let batch, check.batch == ObjectIdentifier(batch) else {
                preconditionFailure("a verification is finished with the SignatureBatch it was begun into")
            }
            if !batch.passed(check.index) { begun.outcome = .invalid(JWSVerifier.signatureDoesNotVerify) }
        }
        if let key = begun.cacheKey { verifiedCache?.insert(begun.outcome, for: key) }
        return begun.outcome
    }

    /// Runs the shared JWS verification, then a payload-specific decoder.
    func decode<T: Sendable>(_ jws: UnsafeBufferPointer<UInt8>, dateMembers: [String] = ["signedDate"], clockUse: ClockUse,
                             signingInput: SigningInputDigest? = nil, deferringTo batch: SignatureBatch? = nil,
                             _ build: (JSONObject) throws(VerificationError) -> T) -> VerificationResult<T> {
        do throws(VerificationError) {
            let verified = try core.verify(bytes: jws, dateMembers: dateMembers, clockUse: clockUse, signingInput: signingInput,
                                           deferringTo: batch)
            return .valid(try build(verified.payload))
        } catch {
            return .invalid(error)
        }
    }

    /// `bundle-id-mismatch` unless the bundle id is configured (or none is configured).
    func checkBundleId(_ bundleId: String?) throws(VerificationError) {
        guard !configuration.bundleIds.isEmpty else { return }
        guard let bundleId, configuration.bundleIds.contains(bundleId) else {
            throw VerificationError(.bundleIdMismatch, "bundleId is not one of the configured bundle ids")
        }
    }

    /// `environment-mismatch` unless the policy or an allowed test environment accepts it.
    func checkEnvironment(_ rawEnvironment: String?) throws(VerificationError) {
        guard let rawEnvironment, configuration.accepts(environment: rawEnvironment) else {
            throw VerificationError(.environmentMismatch,
                                    "environment is not accepted by policy \(configuration.environment.rawValue)")
        }
    }

    /// `app-apple-id-mismatch` for a Production payload whose `appAppleId` differs from the
    /// configured one (Apple's rule for notifications and app transactions; skipped when none is
    /// configured or the environment is not Production).
    func checkAppAppleId(_ appAppleId: Int64?, rawEnvironment: String?) throws(VerificationError) {
        guard let expected = configuration.appAppleId, rawEnvironment == AppStoreEnvironment.production.rawValue else { return }
        guard appAppleId == expected else {
            throw VerificationError(.appAppleIdMismatch, "appAppleId does not match the configured app")
        }
    }

    /// Cache statistics: chains built from scratch, cached verified chains, cached rejected headers.
    @_spi(Testing) public var cacheStatistics: (builds: Int, verified: Int, rejected: Int) {
        let counts = core.cache.counts
        return (core.chainBuilds, counts.verified, counts.rejected)
    }
}
