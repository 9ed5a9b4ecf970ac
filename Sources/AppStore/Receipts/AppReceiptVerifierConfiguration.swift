import Foundation

/// Typed configuration of an ``AppReceiptVerifier``: whom to trust, which apps and environments
/// to accept, which instant the chain is validated at, and the size and cache bounds. Validate
/// early with ``validate()`` (the verifier's initializer does it too).
public struct AppReceiptVerifierConfiguration: Sendable {
    /// The instant a receipt's certificate chain must be valid at.
    public enum ValidityDate: String, Sendable, Hashable, CaseIterable {
        /// The receipt's own creation date (attribute 12), as Apple's offline verification and
        /// on-device validation do: receipt leaves live about two years, so a receipt stays
        /// verifiable after its leaf expired. Falls back to the clock when the date is absent.
        case receiptCreationDate
        /// The verifier's clock: rejects every receipt whose signing certificate has expired
        /// since, i.e. most receipts older than a year or two.
        case currentTime
    }

    /// Root certificates a receipt chain must end in; receipts' own embedded roots are never
    /// trusted. Default: ``AppleRootCertificates/appleIncRoot``. Must not be empty.
    public var trustAnchors: [X509Certificate]
    /// Accepted bundle identifiers, compared exactly (case-sensitive). Empty accepts any.
    public var bundleIds: Set<String>
    /// Accepted environments, derived from the receipt type. Default ``AppStoreEnvironmentPolicy/any``.
    public var environment: AppStoreEnvironmentPolicy
    /// Test environments accepted in addition (only `Xcode` exists for receipts). Default empty;
    /// Xcode receipts also need their signing certificate configured as a trust anchor.
    public var allowedTestEnvironments: Set<AppStoreEnvironment>
    /// Which instant the chain is validated at. Default ``ValidityDate/receiptCreationDate``.
    public var validityDate: ValidityDate
    /// Apply OpenSSL's `X509_V_FLAG_X509_STRICT` profile (every real receipt chain passes it).
    public var strictCertificateChecks: Bool
    /// Input bounds and cache sizes.
    public var limits: Limits

    /// Size and cache bounds.
    public struct Limits: Sendable, Equatable {
        /// Maximum length of the base64 receipt in characters. Default 2,097,152 (the largest real
        /// receipt in the vectors, 187 purchases, is 105,472).
        public var maxReceiptBytes: Int
        /// Maximum number of certificates embedded in a receipt. Default 8 (Apple embeds 3).
        public var maxCertificates: Int
        /// Verified chains kept in the per-verifier cache. Default 64.
        public var chainCacheCapacity: Int
        /// Rejected chains kept in the per-verifier cache. Default 256.
        public var rejectedChainCacheCapacity: Int

        /// Creates limits; every parameter has the documented default.
        public init(maxReceiptBytes: Int = 2_097_152, maxCertificates: Int = 8,
                    chainCacheCapacity: Int = 64, rejectedChainCacheCapacity: Int = 256) {
            self.maxReceiptBytes = maxReceiptBytes
            self.maxCertificates = maxCertificates
            self.chainCacheCapacity = chainCacheCapacity
            self.rejectedChainCacheCapacity = rejectedChainCacheCapacity
        }
    }

    /// Creates a configuration.
    /// - Parameters:
    ///   - trustAnchors: Trusted roots; default Apple Inc. Root.
    ///   - bundleIds: Accepted bundle ids (exact); empty accepts any.
    ///   - environment: Accepted environments; default any (Production or Sandbox).
    ///   - allowedTestEnvironments: `Xcode` to accept explicitly; default none.
    ///   - validityDate: When the chain must be valid; default the receipt's creation date.
    ///   - strictCertificateChecks: OpenSSL strict X.509 profile; default `true`.
    ///   - limits: Bounds; default ``Limits/init(maxReceiptBytes:maxCertificates:chainCacheCapacity:rejectedChainCacheCapacity:)``.
    public init(trustAnchors: [X509Certificate] = [AppleRootCertificates.appleIncRoot],
                bundleIds: Set<String> = [],
                environment: AppStoreEnvironmentPolicy = .any,
                allowedTestEnvironments: Set<AppStoreEnvironment> = [],
                validityDate: ValidityDate = .receiptCreationDate,
                strictCertificateChecks: Bool = true,
                limits: Limits = Limits()) {
        self.trustAnchors = trustAnchors
        self.bundleIds = bundleIds
        self.environment = environment
        self.allowedTestEnvironments = allowedTestEnvironments
        self.validityDate = validityDate
        self.strictCertificateChecks = strictCertificateChecks
        self.limits = limits
    }

    /// Checks the configuration for values that can never work.
    /// - Throws: ``AppStoreConfigurationError`` naming the first offending key.
    public func validate() throws {
        try VerifierPolicyChecks.checkTrust(anchors: trustAnchors, bundleIds: bundleIds)
        try VerifierPolicyChecks.checkTestEnvironments(allowedTestEnvironments)
        try VerifierPolicyChecks.check(limits.maxReceiptBytes, in: 16...268_435_456, key: "limits.maxReceiptBytes")
        try VerifierPolicyChecks.check(limits.maxCertificates, in: 1...64, key: "limits.maxCertificates")
        try VerifierPolicyChecks.check(limits.chainCacheCapacity, in: 1...100_000, key: "limits.chainCacheCapacity")
        try VerifierPolicyChecks.check(limits.rejectedChainCacheCapacity, in: 1...100_000, key: "limits.rejectedChainCacheCapacity")
    }

    /// Whether a receipt's environment is accepted: the policy, or an explicitly allowed test environment.
    func accepts(environment typed: AppStoreEnvironment?) -> Bool {
        guard let typed else { return false }
        return environment.accepts(typed) || allowedTestEnvironments.contains(typed)
    }
}
