import AppStore
import FakeAppStore
import Foundation
import HTTP
import Observability
import Pipeline
import Testing

/// The verify stage's App Store paths against the fake App Store over real HTTP (CurlHTTPClient
/// to libmicrohttpd on loopback): `transactionId` through the Server API, `appReceipt` through
/// `verifyReceipt` (with the 21007 reroute), and every transient fault classified retryable with
/// its taxonomy code, so the runner retries (or dead-letters) instead of rejecting.
@Suite(.timeLimit(.minutes(2))) struct AppStoreKindsTests {
    static let bundleId = "com.demo.game"

    struct Rig {
        let fake: FakeAppStore
        let http: CurlHTTPClient
        let stage: VerifyStage

        /// - Parameter requestTimeout: generous by default: the fake's handlers share this test
        ///   process's cooperative threads with the CPU-heavy suites running in parallel.
        init(faults: FakeAppStoreFaults = .none, requestTimeout: Duration = .seconds(30)) throws {
            let credentials = try FakeAppStoreCredentials.generate()
            var configuration = FakeAppStoreConfiguration(bundleId: AppStoreKindsTests.bundleId, credentials: credentials)
            configuration.faults = faults
            fake = try FakeAppStore(configuration: configuration)
            http = try CurlHTTPClient()
            var apiConfiguration = fake.serverAPIConfiguration()
            apiConfiguration.requestTimeout = requestTimeout
            let api = try AppStoreServerAPIClient(configuration: apiConfiguration, signer: credentials.apiKey, transport: http)
            var legacyConfiguration = fake.verifyReceiptConfiguration()
            legacyConfiguration.requestTimeout = requestTimeout
            let legacy = try VerifyReceiptClient(configuration: legacyConfiguration, sharedSecret: credentials.sharedSecret,
                                                 transport: http)
            let verifier = AppStoreSubmissionVerifier(
                verifier: try SignedDataVerifier(configuration: fake.verifierConfiguration()),
                legacy: LegacyReceiptVerification(mode: .verifyReceipt, receiptVerifier: try AppReceiptVerifier(),
                                                  verifyReceipt: legacy),
                serverAPI: api)
            stage = VerifyStage(verifier: verifier)
        }

        func submission(_ kind: SubmissionKind, _ payload: String) -> IngestedSubmission {
            IngestedSubmission(submissionId: "s-\(UUID().uuidString)", bundleId: AppStoreKindsTests.bundleId, userId: "u1",
                               kind: kind, payload: payload, submittedAt: Date(), ingestedAt: Date())
        }

        func process(_ submission: IngestedSubmission) async -> Result<StageResult<ReceiptVerified>, any Error> {
            do { return .success(try await stage.process(submission, context: StageContext(now: Date()))) } catch { return .failure(error) }
        }

        func shutdown() async {
            fake.stop()
            await http.shutdownAndWait()
        }
    }

    @Test func transactionIdAndReceiptsVerifyThroughTheFakeAppStore() async throws {
        let rig = try Rig()
        let sub = rig.fake.store.purchase(productId: "com.demo.monthly.sub", type: .autoRenewable, environment: .sandbox,
                                          purchaseDate: Date().addingTimeInterval(-3600), expiresDate: Date().addingTimeInterval(86_400 * 29))
        // transactionId: Production answers 4040010, the client asks Sandbox, the signed answer verifies.
        guard case .success(.emit(let verified)) = await rig.process(rig.submission(.transactionId, sub.transactionId)) else {
            Issue.record("transactionId did not verify"); await rig.shutdown(); return
        }
        #expect(verified.map(\.transaction.transactionId) == [sub.transactionId])
        #expect(verified.first?.transaction.environment == "Sandbox")
        #expect(verified.first?.recordKey == sub.originalTransactionId)

        // appReceipt via verifyReceipt: a sandbox receipt hits production, gets 21007, is rerouted.
        let receipt = rig.fake.store.makeReceipt(customerId: sub.customerId, environment: .sandbox)
        guard case .success(.emit(let fromReceipt)) = await rig.process(rig.submission(.appReceipt, receipt)) else {
            Issue.record("receipt did not verify"); await rig.shutdown(); return
        }
        #expect(fromReceipt.map(\.transaction.transactionId).contains(sub.transactionId))
        #expect(rig.fake.statistics.reroutes >= 1, "the sandbox receipt was rerouted after 21007")

        // An unknown transaction id is retryable a bounded number of times (it may appear late).
        let unknown = await rig.process(rig.submission(.transactionId, "3999999999999999"))
        guard case .failure(let error as AppStoreRequestStageError) = unknown else {
            Issue.record("unknown id: \(unknown)"); await rig.shutdown(); return
        }
        #expect(error.reason.rawValue == "appstore-api-transaction-not-found")
        #expect(error.disposition == .transient)
        await rig.shutdown()
    }

    @Test(arguments: [
        ("5xx", "appstore-api-unavailable", "verify-receipt-http-unavailable"),
        ("429", "appstore-api-rate-limited", "verify-receipt-http-unavailable"),
        ("21005", nil, "verify-receipt-unavailable-21005"),
        ("drop", "network-error", "network-error"),
        ("timeout", "network-timeout", "network-timeout"),
    ] as [(String, String?, String)])
    func transientFaultsAreClassifiedRetryable(fault: String, apiCode: String?, receiptCode: String) async throws {
        var faults = FakeAppStoreFaults()
        switch fault {
        case "5xx": faults.serverErrorRate = 1
        case "429": faults.rateLimitRate = 1; faults.retryAfterDelay = .seconds(30)
        case "21005": faults.status21005Rate = 1
        case "drop": faults.dropRate = 1
        default: faults.timeoutRate = 1; faults.timeoutHold = .seconds(60)
        }
        let rig = try Rig(faults: faults, requestTimeout: fault == "timeout" ? .seconds(2) : .seconds(30))
        let sub = rig.fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                          purchaseDate: Date())
        if let apiCode {
            let sent = Date()
            let result = await rig.process(rig.submission(.transactionId, sub.transactionId))
            guard case .failure(let error as AppStoreRequestStageError) = result else {
                Issue.record("\(fault): \(result)"); await rig.shutdown(); return
            }
            #expect(error.reason.rawValue == apiCode)
            #expect(error.disposition == .transient)
            // The fake asks for 30 s: Retry-After (UNIX ms) must land well after the request was sent.
            if fault == "429" { #expect((error.retryAfter ?? .distantPast) > sent.addingTimeInterval(25)) }
        }
        let receipt = rig.fake.store.makeReceipt(customerId: sub.customerId, environment: .production)
        let result = await rig.process(rig.submission(.appReceipt, receipt))
        guard case .failure(let error as AppStoreRequestStageError) = result else {
            Issue.record("\(fault) receipt: \(result)"); await rig.shutdown(); return
        }
        #expect(error.reason.rawValue == receiptCode)
        #expect(error.disposition == .transient)
        await rig.shutdown()
    }
}
