import AppStore
import FakeAppStore
import Foundation
import HTTP
import Testing

/// The real `CurlHTTPClient` and clients against the real fake: every endpoint, both
/// environments, signatures that verify with the fake's root, pagination, and authentication.
@Suite struct FakeAppStoreEndpointTests {
    @Test func transactionInfoVerifiesWithTheFakesRoot() async throws {
        try await FakeHarness.with { harness in
            let purchase = harness.fake.store.purchase(
                productId: "com.example.fake.coins", type: .consumable, environment: .production,
                purchaseDate: Date().addingTimeInterval(-60), quantity: 3)
            let response = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
            #expect(response.environment == .production)
            let transaction = try response.verifiedTransaction(using: harness.verifier).get()
            #expect(transaction.transactionId == purchase.transactionId)
            #expect(transaction.bundleId == FakeHarness.bundleId)
            #expect(transaction.productId == "com.example.fake.coins")
            #expect(transaction.quantity == 3)
            #expect(transaction.type == .consumable)
            #expect(transaction.environment == .production)
            #expect(harness.fake.statistics.requests == 1)

            // Another PKI's verifier refuses the same data.
            let stranger = try SignedDataVerifier(configuration: SignedDataVerifierConfiguration(
                trustAnchors: [try FakeAppStoreCredentials.generate().pki.root], environment: .any))
            #expect(response.verifiedTransaction(using: stranger).error?.reason == .untrustedRoot)
        }
    }

    @Test func sandboxTransactionIsFoundThroughTheFallback() async throws {
        try await FakeHarness.with { harness in
            let purchase = harness.subscription(.sandbox)
            let response = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
            #expect(response.environment == .sandbox)
            #expect(try response.verifiedTransaction(using: harness.verifier).get().environment == .sandbox)
            #expect(harness.fake.statistics.requests == 2, "production said 4040010 first")
        }
    }

    @Test func unknownTransactionIsRetryableThenFinal() async throws {
        try await FakeHarness.with { harness in
            let first = await failure(AppStoreServerAPIError.self) {
                _ = try await harness.api.getTransactionInfo(transactionId: "999", attempt: 1)
            }
            #expect(first?.reason.code == "appstore-api-transaction-not-found")
            #expect(first?.apiErrorCode == 4_040_010)
            #expect(first?.isRetryable == true)
            let last = await failure(AppStoreServerAPIError.self) {
                _ = try await harness.api.getTransactionInfo(transactionId: "999", attempt: 3)
            }
            #expect(last?.isRetryable == false)
        }
    }

    @Test func historyPaginatesWithRevisionTokens() async throws {
        try await FakeHarness.with(historyPageSize: 2) { harness in
            var latest = harness.subscription(.sandbox)
            let original = latest
            for _ in 0..<3 { latest = harness.fake.store.renew(latest, period: .seconds(30 * 86_400)) }
            harness.fake.store.purchase(productId: "com.example.fake.coins", type: .consumable, environment: .sandbox,
                                        customerId: original.customerId, purchaseDate: Date().addingTimeInterval(-10))
            let pages = try await harness.api.getAllTransactionHistory(transactionId: latest.transactionId)
            #expect(pages.map(\.signedTransactions.count) == [2, 2, 1])
            #expect(pages.map(\.hasMore) == [true, true, false])
            #expect(pages.allSatisfy { $0.environment == .sandbox && $0.bundleId == FakeHarness.bundleId })
            #expect(pages.compactMap(\.revision).contains { $0.contains("=") }, "opaque tokens with '=' survive the round trip")
            let transactions = try pages.flatMap { try $0.verifiedTransactions(using: harness.verifier).map { try $0.get() } }
            #expect(transactions.count == 5)
            #expect(Set(transactions.map(\.transactionId)).count == 5)
            #expect(transactions.filter { $0.originalTransactionId == original.transactionId }.count == 4)
            #expect(transactions.map(\.purchaseDate) == transactions.map(\.purchaseDate).sorted())
        }
    }

    @Test func subscriptionStatusesCarryVerifiableRenewalInfo() async throws {
        try await FakeHarness.with { harness in
            let first = harness.subscription(.production)
            let renewal = harness.fake.store.renew(first, period: .seconds(30 * 86_400))
            var lapsed = FakeTransaction(
                transactionId: "1000000000009999", customerId: first.customerId, productId: "com.example.fake.yearly",
                type: .autoRenewable, subscriptionGroupIdentifier: "21000001",
                purchaseDate: Date().addingTimeInterval(-400 * 86_400), expiresDate: Date().addingTimeInterval(-35 * 86_400),
                environment: .production, autoRenews: false)
            harness.fake.store.add(lapsed)
            lapsed.transactionId = "1000000000009998"
            lapsed.originalTransactionId = lapsed.transactionId
            lapsed.revocationDate = Date().addingTimeInterval(-86_400)
            lapsed.expiresDate = Date().addingTimeInterval(86_400)
            harness.fake.store.add(lapsed)

            let response = try await harness.api.getAllSubscriptionStatuses(transactionId: first.transactionId)
            #expect(response.environment == .production)
            #expect(response.appAppleId == 1_234_567_890)
            let items = response.data.flatMap(\.lastTransactions)
            #expect(items.count == 3)
            let byOriginal = Dictionary(uniqueKeysWithValues: items.map { ($0.originalTransactionId ?? "", $0) })
            let active = try #require(byOriginal[first.transactionId])
            #expect(active.status == .active)
            #expect(try active.verifiedTransaction(using: harness.verifier)?.get().transactionId == renewal.transactionId)
            let info = try #require(try active.verifiedRenewalInfo(using: harness.verifier)?.get())
            #expect(info.autoRenewStatus == .on)
            #expect(info.originalTransactionId == first.transactionId)
            #expect(byOriginal["1000000000009999"]?.status == .expired)
            #expect(try byOriginal["1000000000009999"]?.verifiedRenewalInfo(using: harness.verifier)?.get().autoRenewStatus == .off)
            #expect(byOriginal["1000000000009998"]?.status == .revoked)
        }
    }

    @Test func tokensFromAnotherKeyAreUnauthorized() async throws {
        try await FakeHarness.with(apiKey: try AppStoreJWTSigner.generate()) { harness in
            let purchase = harness.subscription(.production)
            let error = await failure(AppStoreServerAPIError.self) {
                _ = try await harness.api.getTransactionInfo(transactionId: purchase.transactionId)
            }
            #expect(error?.reason.code == "appstore-api-unauthorized")
            #expect(error?.isConfigurationAlarm == true)
            #expect(error?.isRetryable == false)
            #expect(harness.fake.statistics.unauthorized == 1)
        }
    }

    @Test func wrongBundleIdIsUnauthorized() async throws {
        try await FakeHarness.with { harness in
            var configuration = harness.fake.serverAPIConfiguration()
            configuration.bundleId = "com.example.other"
            let client = try AppStoreServerAPIClient(configuration: configuration, signer: harness.credentials.apiKey,
                                                     transport: harness.http)
            let error = await failure(AppStoreServerAPIError.self) { _ = try await client.getTransactionInfo(transactionId: "1") }
            #expect(error?.httpStatus == 401)
            // No bearer token at all: the same answer, with an empty body as Apple sends.
            let bare = try await harness.http.execute(HTTPRequest(url: harness.fake.productionBaseURL + "/inApps/v1/transactions/1"),
                                                      timeout: .seconds(2))
            #expect(bare.status == 401 && bare.body.isEmpty)
        }
    }

    @Test func verifyReceiptReroutesSandboxReceiptsAndExtractsTransactions() async throws {
        try await FakeHarness.with { harness in
            let subscription = harness.subscription(.sandbox)
            harness.fake.store.renew(subscription, period: .seconds(30 * 86_400))
            harness.fake.store.purchase(productId: "com.example.fake.coins", type: .consumable, environment: .sandbox,
                                        customerId: subscription.customerId, purchaseDate: Date(), quantity: 2)
            let receipt = harness.fake.store.makeReceipt(customerId: subscription.customerId, environment: .sandbox)

            let result = try await harness.receipts.verify(receiptData: receipt)
            #expect(result.status == 0)
            #expect(result.environment == .sandbox)
            #expect(result.rawEnvironment == "Sandbox")
            #expect(result.bundleId == FakeHarness.bundleId)
            #expect(result.inApp.count == 3)
            #expect(result.latestReceiptInfo.count == 2, "only auto-renewables, unsigned JSON as Apple sends")
            #expect(result.pendingRenewalInfo.map(\.originalTransactionId) == [subscription.transactionId])
            #expect(result.latestReceipt == receipt)
            let transactions = result.transactions
            #expect(transactions.count == 3)
            let coins = try #require(transactions.first { $0.productId == "com.example.fake.coins" })
            #expect(coins.quantity == 2 && coins.inAppOwnershipType == "PURCHASED" && coins.expiresDateMs == nil)
            let renewal = try #require(transactions.first { $0.transactionId != subscription.transactionId && $0.expiresDateMs != nil })
            #expect(renewal.originalTransactionId == subscription.transactionId)
            #expect(renewal.purchaseDateMilliseconds != nil)
            #expect(harness.fake.statistics.reroutes == 1)
            #expect(harness.fake.statistics.requests == 2)
        }
    }

    @Test func verifyReceiptProductionReceiptAndSharedSecret() async throws {
        try await FakeHarness.with { harness in
            let purchase = harness.fake.store.purchase(productId: "com.example.fake.pro", type: .nonConsumable,
                                                       environment: .production, purchaseDate: Date())
            let receipt = harness.fake.store.makeReceipt(customerId: purchase.customerId, environment: .production)
            let result = try await harness.receipts.verify(receiptData: receipt)
            #expect(result.environment == .production)
            #expect(result.transactions.map(\.transactionId) == [purchase.transactionId])
            #expect(harness.fake.statistics.reroutes == 0)

            let wrongSecret = try VerifyReceiptClient(configuration: harness.fake.verifyReceiptConfiguration(),
                                                      sharedSecret: "wrong", transport: harness.http)
            let error = await failure(VerifyReceiptError.self) { _ = try await wrongSecret.verify(receiptData: receipt) }
            #expect(error?.reason.code == "verify-receipt-shared-secret-21004")
            #expect(error?.isConfigurationAlarm == true)

            let forged = await failure(VerifyReceiptError.self) {
                _ = try await harness.receipts.verify(receiptData: Data("forged".utf8).base64EncodedString())
            }
            #expect(forged?.reason.code == "verify-receipt-unauthenticated-21003")
            #expect(forged?.isRetryable == false)
        }
    }
}
