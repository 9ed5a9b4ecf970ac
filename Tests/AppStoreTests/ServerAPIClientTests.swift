import Foundation
import HTTP
import Testing
@testable import AppStore

/// Request shape, decoding and the `4040010` environment fallback of ``AppStoreServerAPIClient``.
@Suite struct ServerAPIClientTests {
    static let notFound = ServerAPIFixture.apiError(404, 4_040_010)

    @Test func transactionInfoRequestAndDecoding() async throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let stub = StubTransport(sequence: [ServerAPIFixture.json("{\"signedTransactionInfo\":\"\(jws)\"}")])
        let client = try ServerAPIFixture.client(stub)
        let response = try await client.getTransactionInfo(transactionId: "2000000000000002")
        #expect(response.signedTransactionInfo == jws)
        #expect(response.environment == .production)
        let request = try #require(stub.requests.first)
        #expect(request.method == .get)
        #expect(request.url == "https://api.example.test/inApps/v1/transactions/2000000000000002")
        #expect(request.headers["Authorization"]?.hasPrefix("Bearer ey") == true)
        #expect(request.headers["Accept"] == "application/json")
        #expect(stub.timeouts == [.seconds(10)])
        let transaction = try response.verifiedTransaction(using: try harness.verifier()).get()
        #expect(transaction.transactionId == "2000000000000002")
    }

    @Test func notFoundTriesTheOtherEnvironmentOnce() async throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let stub = StubTransport { request in
            request.url.hasPrefix(ServerAPIFixture.sandbox)
                ? ServerAPIFixture.json("{\"signedTransactionInfo\":\"\(jws)\"}") : Self.notFound
        }
        let response = try await ServerAPIFixture.client(stub).getTransactionInfo(transactionId: "7")
        #expect(response.environment == .sandbox)
        #expect(stub.requests.map(\.url) == ["https://api.example.test/inApps/v1/transactions/7",
                                              "https://sandbox.example.test/inApps/v1/transactions/7"])
    }

    @Test func notFoundInBothEnvironmentsIsRetryableUntilTheAttemptBound() async throws {
        let stub = StubTransport(sequence: [Self.notFound])
        var configuration = ServerAPIFixture.configuration()
        configuration.transactionNotFoundAttempts = 3
        let client = try ServerAPIFixture.client(stub, configuration: configuration)
        for attempt in 1...4 {
            let error = try #require(await ServerAPIFixture.apiFailure {
                _ = try await client.getTransactionInfo(transactionId: "7", attempt: attempt)
            })
            #expect(error.reason.code == "appstore-api-transaction-not-found")
            #expect(error.apiErrorCode == 4_040_010)
            #expect(error.httpStatus == 404)
            #expect(error.environment == .sandbox, "the last environment asked")
            #expect(error.isRetryable == (attempt < 3), "attempt \(attempt)")
        }
        #expect(stub.requests.count == 8, "two environments per attempt")
    }

    @Test func sandboxFirstFallsBackToProduction() async throws {
        let stub = StubTransport(sequence: [Self.notFound, Self.notFound])
        var configuration = ServerAPIFixture.configuration()
        configuration.environment = .sandbox
        configuration.transactionNotFoundAttempts = 1
        let client = try ServerAPIFixture.client(stub, configuration: configuration)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getAllSubscriptionStatuses(transactionId: "7") })
        #expect(!error.isRetryable)
        #expect(error.environment == .production)
        #expect(stub.requests.map(\.url) == ["https://sandbox.example.test/inApps/v1/subscriptions/7",
                                              "https://api.example.test/inApps/v1/subscriptions/7"])
    }

    @Test func fallbackCanBeDisabled() async throws {
        let stub = StubTransport(sequence: [Self.notFound])
        var configuration = ServerAPIFixture.configuration()
        configuration.tryOtherEnvironmentOnNotFound = false
        let client = try ServerAPIFixture.client(stub, configuration: configuration)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "7") })
        #expect(error.reason == .apiTransactionNotFound)
        #expect(error.isRetryable)
        #expect(stub.requests.count == 1)
    }

    @Test func otherFailuresDoNotTriggerTheFallback() async throws {
        let stub = StubTransport(sequence: [Self.notFound, HTTPResponse(status: 503)])
        let client = try ServerAPIFixture.client(stub)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "7") })
        #expect(error.reason == .apiUnavailable, "the sandbox answer (503) wins over the production 4040010")
        #expect(error.environment == .sandbox)
        #expect(stub.requests.count == 2)
    }

    @Test func historyPagesFollowRevisionPercentEncoded() async throws {
        let page1 = ServerAPIFixture.json("""
            {"revision":"a+b/c=","hasMore":true,"bundleId":"com.example.app","appAppleId":12,"environment":"Sandbox",
             "signedTransactions":["x.y.z"]}
            """)
        let page2 = ServerAPIFixture.json("""
            {"revision":"end","hasMore":false,"environment":"Sandbox","signedTransactions":["u.v.w","p.q.r"]}
            """)
        let stub = StubTransport { request in
            if request.url.hasPrefix(ServerAPIFixture.production) { return Self.notFound }
            return request.url.contains("revision=") ? page2 : page1
        }
        let pages = try await ServerAPIFixture.client(stub).getAllTransactionHistory(transactionId: "9")
        #expect(pages.map(\.signedTransactions) == [["x.y.z"], ["u.v.w", "p.q.r"]])
        #expect(pages.map(\.hasMore) == [true, false])
        #expect(pages[0].appAppleId == 12)
        #expect(pages.allSatisfy { $0.environment == .sandbox })
        #expect(stub.requests.map(\.url) == [
            "https://api.example.test/inApps/v2/history/9",
            "https://sandbox.example.test/inApps/v2/history/9",
            "https://sandbox.example.test/inApps/v2/history/9?revision=a%2Bb%2Fc%3D",
        ], "the second page goes straight to the environment that answered")
    }

    @Test func historyThatNeverEndsIsBounded() async throws {
        let endless = ServerAPIFixture.json("{\"revision\":\"r\",\"hasMore\":true,\"signedTransactions\":[]}")
        var configuration = ServerAPIFixture.configuration()
        configuration.maxHistoryPages = 3
        let stub = StubTransport(sequence: [endless])
        let client = try ServerAPIFixture.client(stub, configuration: configuration)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getAllTransactionHistory(transactionId: "9") })
        #expect(error.reason == .apiInvalidResponse)
        #expect(stub.requests.count == 3)
    }

    @Test func subscriptionStatusesDecodeAndVerify() async throws {
        let harness = try Harness()
        let transaction = try harness.signTransaction()
        let renewal = try harness.pki.signer.sign(payloadJSON: "{\"environment\":\"Sandbox\",\"originalTransactionId\":\"2000000000000001\",\"autoRenewStatus\":1,\"signedDate\":\(TestClock.insideMilliseconds)}")
        let stub = StubTransport(sequence: [ServerAPIFixture.json("""
            {"environment":"Sandbox","bundleId":"com.example.app","appAppleId":5,"data":[{"subscriptionGroupIdentifier":"21000000",
             "lastTransactions":[{"status":1,"originalTransactionId":"2000000000000001","signedTransactionInfo":"\(transaction)",
             "signedRenewalInfo":"\(renewal)"},{"status":9,"originalTransactionId":"3"}]}]}
            """)])
        let response = try await ServerAPIFixture.client(stub).getAllSubscriptionStatuses(transactionId: "2000000000000001")
        #expect(response.data.count == 1)
        let items = response.data[0].lastTransactions
        #expect(items.map(\.status) == [.active, nil])
        #expect(items[1].rawStatus == 9)
        let verifier = try harness.verifier()
        #expect(try items[0].verifiedTransaction(using: verifier)?.get().originalTransactionId == "2000000000000001")
        #expect(try items[0].verifiedRenewalInfo(using: verifier)?.get().autoRenewStatus == .on)
        #expect(items[1].verifiedTransaction(using: verifier) == nil)
        #expect(stub.requests.first?.url == "https://api.example.test/inApps/v1/subscriptions/2000000000000001")
    }

    @Test(arguments: ["", "12/34", "1?x=2", "../admin", "12 34", String(repeating: "1", count: 65)])
    func unsafeTransactionIdsAreRefusedWithoutARequest(_ id: String) async throws {
        let stub = StubTransport(sequence: [HTTPResponse(status: 200)])
        let error = try #require(await ServerAPIFixture.apiFailure {
            _ = try await ServerAPIFixture.client(stub).getTransactionInfo(transactionId: id)
        })
        #expect(error.reason.code == "appstore-api-invalid-request")
        #expect(!error.isRetryable)
        #expect(stub.requests.isEmpty)
    }

    @Test func wrongTypesInABodyAreInvalidResponses() async throws {
        let stub = StubTransport(sequence: [ServerAPIFixture.json("{\"hasMore\":\"yes\",\"signedTransactions\":[]}")])
        let error = try #require(await ServerAPIFixture.apiFailure {
            _ = try await ServerAPIFixture.client(stub).getTransactionHistory(transactionId: "1")
        })
        #expect(error.reason == .apiInvalidResponse)
        #expect(error.isRetryable)
    }
}
