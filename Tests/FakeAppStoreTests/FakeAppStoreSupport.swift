import AppStore
import FakeAppStore
import Foundation
import HTTP
import Testing

/// A running fake App Store with real clients in front of it: `CurlHTTPClient` for transport, the
/// Server API and `verifyReceipt` clients configured with the fake's credentials, and a verifier
/// that trusts the fake's root.
struct FakeHarness {
    let fake: FakeAppStore
    let http: CurlHTTPClient
    let api: AppStoreServerAPIClient
    let receipts: VerifyReceiptClient
    let verifier: SignedDataVerifier
    let credentials: FakeAppStoreCredentials

    static let bundleId = "com.example.fake"

    init(faults: FakeAppStoreFaults = .none, historyPageSize: Int = 20, requestTimeout: Duration = .seconds(5),
         seed: UInt64 = 7, credentials: FakeAppStoreCredentials? = nil, apiKey: AppStoreJWTSigner? = nil) throws {
        let credentials = try credentials ?? FakeAppStoreCredentials.generate()
        var configuration = FakeAppStoreConfiguration(bundleId: Self.bundleId, credentials: credentials)
        configuration.faults = faults
        configuration.historyPageSize = historyPageSize
        configuration.seed = seed
        fake = try FakeAppStore(configuration: configuration)
        var httpConfiguration = CurlHTTPClient.Configuration()
        httpConfiguration.connectTimeout = .seconds(2)
        http = try CurlHTTPClient(configuration: httpConfiguration)
        var apiConfiguration = fake.serverAPIConfiguration()
        apiConfiguration.requestTimeout = requestTimeout
        api = try AppStoreServerAPIClient(configuration: apiConfiguration, signer: apiKey ?? credentials.apiKey, transport: http)
        var legacy = fake.verifyReceiptConfiguration()
        legacy.requestTimeout = requestTimeout
        receipts = try VerifyReceiptClient(configuration: legacy, sharedSecret: credentials.sharedSecret, transport: http)
        verifier = try SignedDataVerifier(configuration: fake.verifierConfiguration())
        self.credentials = credentials
    }

    /// Stops the server and the client thread.
    func shutdown() async {
        fake.stop()
        await http.shutdownAndWait()
    }

    /// Runs `body` with a harness and always shuts it down.
    static func with<T>(faults: FakeAppStoreFaults = .none, historyPageSize: Int = 20, requestTimeout: Duration = .seconds(5),
                        seed: UInt64 = 7, apiKey: AppStoreJWTSigner? = nil,
                        _ body: (FakeHarness) async throws -> T) async throws -> T {
        let harness = try FakeHarness(faults: faults, historyPageSize: historyPageSize, requestTimeout: requestTimeout,
                                      seed: seed, apiKey: apiKey)
        do {
            let result = try await body(harness)
            await harness.shutdown()
            return result
        } catch {
            await harness.shutdown()
            throw error
        }
    }

    /// A monthly subscription bought an hour ago, active for 29 more days.
    @discardableResult
    func subscription(_ environment: AppStoreEnvironment, customerId: String? = nil) -> FakeTransaction {
        fake.store.purchase(productId: "com.example.fake.monthly", type: .autoRenewable, environment: environment,
                            customerId: customerId, purchaseDate: Date().addingTimeInterval(-3600),
                            expiresDate: Date().addingTimeInterval(29 * 86_400))
    }
}

/// The error `body` threw, cast to the expected failure type.
func failure<E: Error>(_ type: E.Type, _ body: () async throws -> Void) async -> E? {
    do { try await body() } catch { return error as? E }
    return nil
}
