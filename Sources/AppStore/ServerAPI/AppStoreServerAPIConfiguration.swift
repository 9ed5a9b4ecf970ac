/// Typed configuration of an ``AppStoreServerAPIClient``: who we are to Apple (key, key id,
/// issuer id, bundle id), where Apple is, and how long to wait.
///
/// The signing key is given as a file path (the `.p8` from App Store Connect), never inline, so
/// configuration can be printed and logged freely (``description`` shows the path only).
/// Call ``validate()`` early; the client's initializer does too.
public struct AppStoreServerAPIConfiguration: Sendable, CustomStringConvertible {
    /// Path of the in-app purchase key (`AuthKey_<keyId>.p8`: PKCS#8 PEM, EC P-256). Read once
    /// when the client is created; its contents are never logged.
    public var signingKeyPath: String
    /// The key's id from App Store Connect (the JWT header's `kid`), e.g. `2X9R4HXF34`.
    public var keyId: String
    /// The issuer id from App Store Connect's Keys page (the JWT's `iss`), a UUID.
    public var issuerId: String
    /// The app's bundle id (the JWT's `bid`); Apple answers only for this app.
    public var bundleId: String
    /// The environment tried first. Production by default: a sandbox transaction id is then found
    /// by the fallback (see ``tryOtherEnvironmentOnNotFound``), as Apple recommends for receipts.
    public var environment: AppStoreEnvironment
    /// Production base URL, without a trailing slash.
    public var productionBaseURL: String
    /// Sandbox base URL, without a trailing slash.
    public var sandboxBaseURL: String
    /// Whole-request deadline per HTTP exchange; a slower answer is `network-timeout` (retryable).
    public var requestTimeout: Duration
    /// Lifetime of each bearer token (`exp - iat`). Apple rejects more than 60 minutes.
    public var tokenLifetime: Duration
    /// A cached token is replaced this long before it expires, so no request carries a token that
    /// could expire in flight or under modest clock skew.
    public var tokenRefreshMargin: Duration
    /// On `4040010` (transaction id not found) ask the other environment before failing.
    public var tryOtherEnvironmentOnNotFound: Bool
    /// Attempts (counted by the caller, 1-based) for which `4040010` stays retryable; at this
    /// attempt it becomes final. Apple documents that a fresh transaction can briefly be unknown.
    public var transactionNotFoundAttempts: Int
    /// Upper bound on pages fetched by ``AppStoreServerAPIClient/getAllTransactionHistory(transactionId:attempt:)``.
    public var maxHistoryPages: Int

    /// Creates a configuration with the documented defaults.
    /// - Parameters:
    ///   - signingKeyPath: Path of the `.p8` key file.
    ///   - keyId: The key id.
    ///   - issuerId: The issuer id.
    ///   - bundleId: The app's bundle id.
    public init(signingKeyPath: String, keyId: String, issuerId: String, bundleId: String) {
        self.signingKeyPath = signingKeyPath
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.environment = .production
        self.productionBaseURL = "https://api.storekit.apple.com"
        self.sandboxBaseURL = "https://api.storekit-sandbox.apple.com"
        self.requestTimeout = .seconds(10)
        self.tokenLifetime = .seconds(30 * 60)
        self.tokenRefreshMargin = .seconds(5 * 60)
        self.tryOtherEnvironmentOnNotFound = true
        self.transactionNotFoundAttempts = 3
        self.maxHistoryPages = 50
    }

    /// Checks every value that can never work, with precise messages.
    /// - Throws: ``AppStoreConfigurationError`` naming the first offending key.
    public func validate() throws(AppStoreConfigurationError) {
        func fail(_ key: String, _ message: String) -> AppStoreConfigurationError {
            AppStoreConfigurationError(key: "serverAPI.\(key)", message: message)
        }
        guard !signingKeyPath.isEmpty else { throw fail("signingKeyPath", "must name the .p8 key file") }
        guard !keyId.isEmpty, keyId.utf8.allSatisfy(Self.isTokenCharacter) else {
            throw fail("keyId", "must be the key id from App Store Connect (letters and digits), got \"\(keyId)\"")
        }
        guard !issuerId.isEmpty, issuerId.utf8.allSatisfy({ Self.isTokenCharacter($0) || $0 == UInt8(ascii: "-") }) else {
            throw fail("issuerId", "must be the issuer id (a UUID) from App Store Connect, got \"\(issuerId)\"")
        }
        guard !bundleId.isEmpty, !bundleId.contains("\""), !bundleId.contains("\\") else {
            throw fail("bundleId", "must be the app's bundle id, got \"\(bundleId)\"")
        }
        guard environment == .production || environment == .sandbox else {
            throw fail("environment", "must be Production or Sandbox, got \(environment.rawValue)")
        }
        for (key, url) in [("productionBaseURL", productionBaseURL), ("sandboxBaseURL", sandboxBaseURL)] {
            let lowered = url.lowercased()
            guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://"), !url.hasSuffix("/"),
                  !url.contains("?"), !url.utf8.contains(where: { $0 <= 0x20 }) else {
                throw fail(key, "must be an absolute http(s) URL without query or trailing slash, got \"\(url)\"")
            }
        }
        guard requestTimeout > .zero else { throw fail("requestTimeout", "must be positive, got \(requestTimeout)") }
        guard tokenLifetime >= .seconds(60), tokenLifetime <= .seconds(3600) else {
            throw fail("tokenLifetime", "must be 1 to 60 minutes (Apple rejects longer tokens), got \(tokenLifetime)")
        }
        guard tokenRefreshMargin >= .zero, tokenRefreshMargin < tokenLifetime else {
            throw fail("tokenRefreshMargin", "must be >= 0 and shorter than tokenLifetime, got \(tokenRefreshMargin)")
        }
        guard (1...100).contains(transactionNotFoundAttempts) else {
            throw fail("transactionNotFoundAttempts", "must be in 1...100, got \(transactionNotFoundAttempts)")
        }
        guard (1...10_000).contains(maxHistoryPages) else {
            throw fail("maxHistoryPages", "must be in 1...10000, got \(maxHistoryPages)")
        }
    }

    /// The base URL serving `environment` (only Production and Sandbox are ever asked).
    func baseURL(for environment: AppStoreEnvironment) -> String {
        environment == .sandbox ? sandboxBaseURL : productionBaseURL
    }

    /// Every setting except key material (there is none to hide: only the key's path is held).
    public var description: String {
        "AppStoreServerAPIConfiguration(keyId: \(keyId), issuerId: \(issuerId), bundleId: \(bundleId), "
            + "signingKeyPath: \(signingKeyPath), environment: \(environment.rawValue), "
            + "production: \(productionBaseURL), sandbox: \(sandboxBaseURL), timeout: \(requestTimeout))"
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
