import AppStore
import Foundation

/// Typed configuration of a ``FakeAppStore``.
public struct FakeAppStoreConfiguration: Sendable {
    /// Bind address; loopback by default so a fake is never exposed by accident.
    public var host: String = "127.0.0.1"
    /// TCP port; 0 picks a free one (read ``FakeAppStore/port``).
    public var port: Int = 0
    /// libmicrohttpd threads (handlers run as tasks, so this bounds socket I/O only).
    public var threadPoolSize: Int = 2
    /// Most open client connections (libmicrohttpd's default is `FD_SETSIZE - 4`, about 1,000).
    /// HTTP/1.1 needs one connection per in-flight request, so a load test with thousands of
    /// requests outstanding needs a higher cap (and a matching `ulimit -n`).
    public var connectionLimit: Int = 16_384
    /// The app the fake serves: the JWT `bid` must match and every transaction carries it.
    public var bundleId: String
    /// The app's App Store id, echoed in Production responses.
    public var appAppleId: Int64 = 1_234_567_890
    /// Keys, PKI and shared secret.
    public var credentials: FakeAppStoreCredentials
    /// Fault injection knobs at start (change them later with ``FakeAppStore/setFaults(_:)``).
    public var faults: FakeAppStoreFaults = .none
    /// Seed of the fault and jitter random source.
    public var seed: UInt64 = 1
    /// Transactions per history page (Apple: 20); tests lower it to exercise pagination.
    public var historyPageSize: Int = 20
    /// Where and how notifications sent with ``FakeAppStore/notify(_:)`` are pushed.
    public var notificationDelivery = FakeNotificationDelivery()
    /// The fake's clock: `signedDate`, token expiry, `Retry-After`.
    public var clock: @Sendable () -> Date = Date.init

    /// Creates a configuration with the documented defaults.
    /// - Parameters:
    ///   - bundleId: The app served.
    ///   - credentials: Keys, PKI and shared secret (see ``FakeAppStoreCredentials/generate(now:withSharedSecret:)``).
    public init(bundleId: String, credentials: FakeAppStoreCredentials) {
        self.bundleId = bundleId
        self.credentials = credentials
    }

    /// Checks the values that can never work.
    /// - Throws: ``AppStoreConfigurationError`` naming the offending key.
    public func validate() throws(AppStoreConfigurationError) {
        guard !bundleId.isEmpty else { throw AppStoreConfigurationError(key: "bundleId", message: "must not be empty") }
        guard (1...1000).contains(historyPageSize) else {
            throw AppStoreConfigurationError(key: "historyPageSize", message: "must be in 1...1000, got \(historyPageSize)")
        }
        try faults.validate()
    }
}
