import AppStore
import Foundation
import HTTP
import Synchronization

/// An in-process stand-in for Apple's purchase-proving endpoints, on loopback, for tests, the demo
/// and chaos runs: the App Store Server API (Get Transaction Info, Get Transaction History v2, Get
/// All Subscription Statuses) and legacy `verifyReceipt`, for both environments on one port.
///
/// | path | serves |
/// |---|---|
/// | `GET /inApps/v1/transactions/{id}` | Production Get Transaction Info |
/// | `GET /inApps/v2/history/{id}[?revision=…]` | Production Get Transaction History (pages of ``FakeAppStoreConfiguration/historyPageSize``) |
/// | `GET /inApps/v1/subscriptions/{id}` | Production Get All Subscription Statuses |
/// | `POST /inApps/v1/notifications/history[?paginationToken=…]` | Get Notification History (both environments' notifications under their prefix) |
/// | `PUT /inApps/v1/transactions/consumption/{id}` | Send Consumption Information (202; kept in ``consumptionReports``) |
/// | `POST /verifyReceipt` | Production `verifyReceipt` |
/// | `/sandbox/…` | the same four for Sandbox |
///
/// So a client points its production base URL at ``productionBaseURL`` and its sandbox base URL
/// at ``sandboxBaseURL``. Server API requests need a bearer JWT signed with
/// ``FakeAppStoreCredentials/apiKey`` and carrying the configured key id, issuer id and bundle
/// id (401 with an empty body otherwise, as Apple answers). Signed data comes from
/// ``FakeAppStoreCredentials/pki``; legacy receipts answer unsigned JSON, as Apple does.
/// Faults are described on ``FakeAppStoreFaults``.
///
/// - Important: Call ``stop()`` when done (or drop the last reference).
public final class FakeAppStore: Sendable {
    /// The configuration it was started with (see ``faults`` for the current fault knobs).
    public let configuration: FakeAppStoreConfiguration
    /// The transactions and receipts it knows; add purchases at any time.
    public let store: FakeTransactionStore
    let router: FakeAppStoreRouter
    private let server: HTTPServer

    /// Starts serving immediately.
    /// - Parameter configuration: Address, app, credentials, faults.
    /// - Throws: ``AppStoreConfigurationError`` for invalid settings, ``HTTPServerError`` when the
    ///   port cannot be bound.
    public init(configuration: FakeAppStoreConfiguration) throws {
        try configuration.validate()
        let store = FakeTransactionStore(seed: configuration.seed)
        let notifications = try FakeNotificationCenter(clock: configuration.clock)
        notifications.delivery = configuration.notificationDelivery
        let router = FakeAppStoreRouter(configuration: configuration, store: store, notifications: notifications)
        self.configuration = configuration
        self.store = store
        self.router = router
        self.server = try HTTPServer(
            configuration: .init(host: configuration.host, port: configuration.port,
                                 threadPoolSize: configuration.threadPoolSize,
                                 connectionLimit: configuration.connectionLimit),
            handler: { request in await router.handle(request) })
    }

    deinit {
        server.stop()
    }

    /// Stops serving; held ("timed out") requests are closed. Safe to call twice.
    public func stop() {
        server.stop()
        router.notifications.stop()
    }

    /// The bound port.
    public var port: Int { server.port }

    /// `http://<host>:<port>`, also the Production Server API base URL.
    public var productionBaseURL: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(port)"
    }

    /// The Sandbox Server API base URL (`…/sandbox`).
    public var sandboxBaseURL: String { productionBaseURL + "/sandbox" }

    /// The Production `verifyReceipt` URL.
    public var productionVerifyReceiptURL: String { productionBaseURL + "/verifyReceipt" }

    /// The Sandbox `verifyReceipt` URL.
    public var sandboxVerifyReceiptURL: String { sandboxBaseURL + "/verifyReceipt" }

    /// The fault knobs in effect.
    public var faults: FakeAppStoreFaults { router.faults.withLock { $0 } }

    /// Replaces the fault knobs; later requests see the new values.
    /// - Parameter faults: The new knobs.
    /// - Throws: ``AppStoreConfigurationError`` when a knob is out of range.
    public func setFaults(_ faults: FakeAppStoreFaults) throws(AppStoreConfigurationError) {
        try faults.validate()
        router.faults.withLock { $0 = faults }
    }

    /// What the fake has answered so far.
    public var statistics: FakeAppStoreStatistics { router.counters.snapshot }

    /// A Server API client configuration pointing at this fake with its credentials (the key path
    /// is not read when the client is created with ``FakeAppStoreCredentials/apiKey`` directly).
    /// - Parameter signingKeyPath: Where the `.p8` lives, if written; any non-empty text otherwise.
    /// - Returns: The configuration.
    public func serverAPIConfiguration(signingKeyPath: String = "fake-appstore.p8") -> AppStoreServerAPIConfiguration {
        var api = AppStoreServerAPIConfiguration(
            signingKeyPath: signingKeyPath, keyId: configuration.credentials.keyId,
            issuerId: configuration.credentials.issuerId, bundleId: configuration.bundleId)
        api.productionBaseURL = productionBaseURL
        api.sandboxBaseURL = sandboxBaseURL
        return api
    }

    /// A `verifyReceipt` client configuration pointing at this fake.
    /// - Returns: The configuration (the shared secret is passed to the client separately).
    public func verifyReceiptConfiguration() -> VerifyReceiptConfiguration {
        var legacy = VerifyReceiptConfiguration()
        legacy.productionURL = productionVerifyReceiptURL
        legacy.sandboxURL = sandboxVerifyReceiptURL
        legacy.bundleIds = [configuration.bundleId]
        return legacy
    }

    /// A verifier configuration that trusts this fake's PKI for its bundle id, either environment.
    public func verifierConfiguration() -> SignedDataVerifierConfiguration {
        SignedDataVerifierConfiguration(trustAnchors: [configuration.credentials.pki.root],
                                        bundleIds: [configuration.bundleId], environment: .any)
    }
}
