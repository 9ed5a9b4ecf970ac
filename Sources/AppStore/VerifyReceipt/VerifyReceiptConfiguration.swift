import Foundation

/// Typed configuration of a ``VerifyReceiptClient`` (Apple's deprecated but still served
/// `verifyReceipt` endpoint, for apps whose clients still send StoreKit 1 receipts).
///
/// The shared secret is given as a file path, so configuration can be printed freely.
public struct VerifyReceiptConfiguration: Sendable, CustomStringConvertible {
    /// Path of a file holding the app-specific (or primary) shared secret, sent as `password`;
    /// needed for receipts with auto-renewable subscriptions. `nil` sends no password.
    public var sharedSecretPath: String?
    /// The production endpoint, always asked first (Apple's rule, so App Review's sandbox
    /// receipts work against a production build).
    public var productionURL: String
    /// The sandbox endpoint, asked when production answers 21007.
    public var sandboxURL: String
    /// Send `exclude-old-transactions: true`: only the latest renewal of each subscription in
    /// `latest_receipt_info`.
    public var excludeOldTransactions: Bool
    /// Accepted `receipt.bundle_id`s (exact); empty accepts any. A receipt of another app is
    /// `verify-receipt-bundle-id-mismatch`, so a genuine receipt cannot be replayed across apps.
    public var bundleIds: Set<String>
    /// Whole-request deadline per HTTP exchange.
    public var requestTimeout: Duration
    /// Attempts (counted by the caller, 1-based) for which status 21002 stays retryable: Apple
    /// returns it for truly malformed receipts but also, transiently, under load.
    public var malformedAttempts: Int
    /// Largest `receipt-data` accepted (base64 characters); larger is refused locally.
    public var maxReceiptDataBytes: Int

    /// Creates a configuration with Apple's endpoints and the documented defaults.
    public init() {
        sharedSecretPath = nil
        productionURL = "https://buy.itunes.apple.com/verifyReceipt"
        sandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"
        excludeOldTransactions = false
        bundleIds = []
        requestTimeout = .seconds(15)
        malformedAttempts = 2
        maxReceiptDataBytes = 1 << 20
    }

    /// Checks every value that can never work.
    /// - Throws: ``AppStoreConfigurationError`` naming the first offending key.
    public func validate() throws(AppStoreConfigurationError) {
        func fail(_ key: String, _ message: String) -> AppStoreConfigurationError {
            AppStoreConfigurationError(key: "verifyReceipt.\(key)", message: message)
        }
        if let sharedSecretPath, sharedSecretPath.isEmpty { throw fail("sharedSecretPath", "must not be empty when set") }
        for (key, url) in [("productionURL", productionURL), ("sandboxURL", sandboxURL)] {
            let lowered = url.lowercased()
            guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://"),
                  !url.utf8.contains(where: { $0 <= 0x20 }) else {
                throw fail(key, "must be an absolute http(s) URL, got \"\(url)\"")
            }
        }
        if let empty = bundleIds.first(where: { $0.isEmpty }) { throw fail("bundleIds", "must be non-empty, got \"\(empty)\"") }
        guard requestTimeout > .zero else { throw fail("requestTimeout", "must be positive, got \(requestTimeout)") }
        guard (1...100).contains(malformedAttempts) else {
            throw fail("malformedAttempts", "must be in 1...100, got \(malformedAttempts)")
        }
        guard maxReceiptDataBytes > 0 else { throw fail("maxReceiptDataBytes", "must be positive") }
    }

    /// Reads and checks the shared secret file.
    /// - Returns: The secret without surrounding whitespace, or `nil` when no path is configured.
    /// - Throws: ``AppStoreConfigurationError`` (the message never contains the secret).
    public func loadSharedSecret() throws(AppStoreConfigurationError) -> String? {
        guard let sharedSecretPath else { return nil }
        guard let data = FileManager.default.contents(atPath: sharedSecretPath) else {
            throw AppStoreConfigurationError(key: "verifyReceipt.sharedSecretPath", message: "cannot read \(sharedSecretPath)")
        }
        let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty, secret.count <= 256, secret.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw AppStoreConfigurationError(key: "verifyReceipt.sharedSecretPath",
                                             message: "\(sharedSecretPath) must hold one shared secret (printable ASCII, no spaces)")
        }
        return secret
    }

    /// Every setting; the shared secret is only ever referred to by its path.
    public var description: String {
        "VerifyReceiptConfiguration(production: \(productionURL), sandbox: \(sandboxURL), "
            + "sharedSecretPath: \(sharedSecretPath ?? "none"), excludeOldTransactions: \(excludeOldTransactions), "
            + "bundleIds: \(bundleIds.sorted()), timeout: \(requestTimeout))"
    }
}
