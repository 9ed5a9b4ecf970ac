import Foundation

/// Typed configuration of a ``SignedDataVerifier``: whom to trust, which app and environment to
/// accept, and the size and cache bounds. Validate early with ``validate()`` (the verifier's
/// initializer does it too).
public struct SignedDataVerifierConfiguration: Sendable {
    /// Root certificates a chain must end in, compared byte-for-byte with `x5c[2]`.
    /// Default: ``AppleRootCertificates/appleRootCAG3``. Must not be empty.
    public var trustAnchors: [X509Certificate]
    /// Accepted bundle identifiers, compared exactly (case-sensitive). Empty accepts any.
    public var bundleIds: Set<String>
    /// The app's App Store id. When set, Production payloads that carry `appAppleId`
    /// (notifications, app transactions) must match it; transactions and renewal infos never do,
    /// as in Apple's library.
    public var appAppleId: Int64?
    /// Accepted environments. Default ``AppStoreEnvironmentPolicy/production``.
    public var environment: AppStoreEnvironmentPolicy
    /// Test environments (`Xcode`, `LocalTesting`) accepted in addition to ``environment``.
    /// Default empty. Their payloads still need a full chain to a configured trust anchor.
    public var allowedTestEnvironments: Set<AppStoreEnvironment>
    /// Apply OpenSSL's `X509_V_FLAG_X509_STRICT` profile to the chain (Apple's library default).
    /// Apple's real chain passes; set `false` only for legacy test chains without key identifiers.
    public var strictCertificateChecks: Bool
    /// Input bounds and cache sizes.
    public var limits: Limits

    /// Size, depth, date and cache bounds.
    public struct Limits: Sendable, Equatable {
        /// Maximum length of the whole compact JWS in bytes. Default 65,536 (Apple's largest are under 20 KB).
        public var maxJWSBytes: Int
        /// Maximum length of the base64url header segment. Default 16,384 (Apple's are about 4.3 KB).
        public var maxHeaderBytes: Int
        /// Maximum length of the base64url payload segment. Default 49,152.
        public var maxPayloadBytes: Int
        /// Maximum nesting of JSON objects and arrays (a top-level object is depth 1). Default 16.
        public var maxJSONDepth: Int
        /// Earliest accepted date in any date field. Default 2000-01-01T00:00:00Z.
        public var earliestDate: Date
        /// Latest accepted date in any date field. Default 2100-01-01T00:00:00Z.
        public var latestDate: Date
        /// Verified chains kept in the per-verifier cache. Default 64.
        public var chainCacheCapacity: Int
        /// Rejected headers kept in the per-verifier cache. Default 256.
        public var rejectedHeaderCacheCapacity: Int
        /// Whole verification outcomes kept by the exact JWS bytes (``VerifiedJWSCache``), least
        /// recently used evicted; 0 turns the cache off. Default 10,000 (an entry is the decoded
        /// payload, about 1 to 3 KB).
        public var verifiedCacheCapacity: Int

        /// Creates limits; every parameter has the documented default.
        public init(maxJWSBytes: Int = 65_536, maxHeaderBytes: Int = 16_384, maxPayloadBytes: Int = 49_152,
                    maxJSONDepth: Int = 16,
                    earliestDate: Date = Date(timeIntervalSince1970: 946_684_800),
                    latestDate: Date = Date(timeIntervalSince1970: 4_102_444_800),
                    chainCacheCapacity: Int = 64, rejectedHeaderCacheCapacity: Int = 256,
                    verifiedCacheCapacity: Int = 10_000) {
            self.maxJWSBytes = maxJWSBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.maxPayloadBytes = maxPayloadBytes
            self.maxJSONDepth = maxJSONDepth
            self.earliestDate = earliestDate
            self.latestDate = latestDate
            self.chainCacheCapacity = chainCacheCapacity
            self.rejectedHeaderCacheCapacity = rejectedHeaderCacheCapacity
            self.verifiedCacheCapacity = verifiedCacheCapacity
        }

        /// The accepted date range in milliseconds since 1970.
        var dateRange: ClosedRange<Int64> {
            earliestDate.millisecondsSince1970...max(earliestDate.millisecondsSince1970, latestDate.millisecondsSince1970)
        }
    }

    /// Creates a configuration.
    /// - Parameters:
    ///   - trustAnchors: Trusted roots; default Apple Root CA - G3.
    ///   - bundleIds: Accepted bundle ids (exact); empty accepts any.
    ///   - appAppleId: The app's App Store id, checked where Apple checks it.
    ///   - environment: Accepted environments; default Production.
    ///   - allowedTestEnvironments: `Xcode`/`LocalTesting` to accept explicitly; default none.
    ///   - strictCertificateChecks: OpenSSL strict X.509 profile; default `true`.
    ///   - limits: Bounds; default ``Limits/init(maxJWSBytes:maxHeaderBytes:maxPayloadBytes:maxJSONDepth:earliestDate:latestDate:chainCacheCapacity:rejectedHeaderCacheCapacity:verifiedCacheCapacity:)``.
    public init(trustAnchors: [X509Certificate] = [AppleRootCertificates.appleRootCAG3],
                bundleIds: Set<String> = [],
                appAppleId: Int64? = nil,
                environment: AppStoreEnvironmentPolicy = .production,
                allowedTestEnvironments: Set<AppStoreEnvironment> = [],
                strictCertificateChecks: Bool = true,
                limits: Limits = Limits()) {
        self.trustAnchors = trustAnchors
        self.bundleIds = bundleIds
        self.appAppleId = appAppleId
        self.environment = environment
        self.allowedTestEnvironments = allowedTestEnvironments
        self.strictCertificateChecks = strictCertificateChecks
        self.limits = limits
    }

    /// Checks the configuration for values that can never work.
    /// - Throws: ``AppStoreConfigurationError`` naming the first offending key.
    public func validate() throws {
        func fail(_ key: String, _ message: String) -> AppStoreConfigurationError {
            AppStoreConfigurationError(key: key, message: message)
        }
        try VerifierPolicyChecks.checkTrust(anchors: trustAnchors, bundleIds: bundleIds)
        if let appAppleId, appAppleId <= 0 { throw fail("appAppleId", "must be positive, got \(appAppleId)") }
        try VerifierPolicyChecks.checkTestEnvironments(allowedTestEnvironments)
        try VerifierPolicyChecks.check(limits.maxJWSBytes, in: 1...16_777_216, key: "limits.maxJWSBytes")
        guard (1...limits.maxJWSBytes).contains(limits.maxHeaderBytes) else {
            throw fail("limits.maxHeaderBytes", "must be in 1...maxJWSBytes (\(limits.maxJWSBytes)), got \(limits.maxHeaderBytes)")
        }
        guard (1...limits.maxJWSBytes).contains(limits.maxPayloadBytes) else {
            throw fail("limits.maxPayloadBytes", "must be in 1...maxJWSBytes (\(limits.maxJWSBytes)), got \(limits.maxPayloadBytes)")
        }
        try VerifierPolicyChecks.check(limits.maxJSONDepth, in: 1...256, key: "limits.maxJSONDepth")
        guard limits.earliestDate < limits.latestDate else {
            throw fail("limits.earliestDate", "must be before limits.latestDate")
        }
        try VerifierPolicyChecks.check(limits.chainCacheCapacity, in: 1...100_000, key: "limits.chainCacheCapacity")
        try VerifierPolicyChecks.check(limits.rejectedHeaderCacheCapacity, in: 1...100_000, key: "limits.rejectedHeaderCacheCapacity")
        try VerifierPolicyChecks.check(limits.verifiedCacheCapacity, in: 0...10_000_000, key: "limits.verifiedCacheCapacity")
    }

    /// Whether an environment claim is accepted: the policy, or an explicitly allowed test environment.
    func accepts(environment raw: String) -> Bool {
        guard let typed = AppStoreEnvironment(rawValue: raw) else { return false }
        return environment.accepts(typed) || allowedTestEnvironments.contains(typed)
    }
}
