import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Bundle id, environment and appAppleId policy.
@Suite struct ClaimsTests {
    @Test func bundleIdMustMatchExactly() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        #expect(try harness.verifier(bundleIds: ["com.example.app"]).verifyAndDecodeTransaction(jws).code == "valid")
        #expect(try harness.verifier(bundleIds: ["com.other", "com.example.app"]).verifyAndDecodeTransaction(jws).code == "valid")
        #expect(try harness.verifier(bundleIds: []).verifyAndDecodeTransaction(jws).code == "valid")
        for wrong in ["com.example.App", "Com.example.app", "com.example.app ", "com.example", "com.example.app.pro"] {
            #expect(try harness.verifier(bundleIds: [wrong]).verifyAndDecodeTransaction(jws).code == "bundle-id-mismatch")
        }
    }

    @Test func bundleIdIsCheckedBeforeEnvironment() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        #expect(try harness.verifier(bundleIds: ["com.other"], environment: .production)
            .verifyAndDecodeTransaction(jws).code == "bundle-id-mismatch")
    }

    @Test(arguments: [
        ("Sandbox", AppStoreEnvironmentPolicy.sandbox, "valid"), ("Sandbox", .any, "valid"),
        ("Sandbox", .production, "environment-mismatch"), ("Production", .production, "valid"),
        ("Production", .any, "valid"), ("Production", .sandbox, "environment-mismatch"),
        ("Xcode", .any, "environment-mismatch"), ("LocalTesting", .any, "environment-mismatch"),
        ("sandbox", .any, "environment-mismatch"), ("PRODUCTION", .any, "environment-mismatch"),
        ("Staging", .any, "environment-mismatch"), ("", .any, "environment-mismatch"),
    ])
    func environmentPolicy(_ environment: String, _ policy: AppStoreEnvironmentPolicy, _ expected: String) throws {
        let harness = try Harness()
        let jws = try harness.signTransaction(["environment": "\"\(environment)\""])
        #expect(try harness.verifier(environment: policy).verifyAndDecodeTransaction(jws).code == expected)
    }

    @Test func testEnvironmentsOnlyWhenExplicitlyAllowed() throws {
        let harness = try Harness()
        let xcode = try harness.signTransaction(["environment": "\"Xcode\""])
        let local = try harness.signTransaction(["environment": "\"LocalTesting\""])
        let allowXcode = try harness.verifier(environment: .production, allowedTestEnvironments: [.xcode])
        #expect(allowXcode.verifyAndDecodeTransaction(xcode).code == "valid")
        #expect(allowXcode.verifyAndDecodeTransaction(local).code == "environment-mismatch")
        let allowLocal = try harness.verifier(environment: .sandbox, allowedTestEnvironments: [.localTesting])
        #expect(allowLocal.verifyAndDecodeTransaction(local).code == "valid")
        #expect(allowLocal.verifyAndDecodeTransaction(xcode).code == "environment-mismatch")
        #expect(allowLocal.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
    }

    @Test func appAppleIdIsNotCheckedForTransactions() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction(["environment": "\"Production\"", "appAppleId": "1"])
        #expect(try harness.verifier(environment: .production, appAppleId: 1_601_830_814).verifyAndDecodeTransaction(jws).code == "valid")
    }

    @Test func appAppleIdRuleForPayloadsThatCarryIt() throws {
        // The rule notifications and app transactions will use (Apple: Production only).
        let harness = try Harness()
        let verifier = try harness.verifier(environment: .any, appAppleId: 1_601_830_814)
        #expect(throws: Never.self) { try verifier.checkAppAppleId(1_601_830_814, rawEnvironment: "Production") }
        #expect(throws: VerificationError(.appAppleIdMismatch, "appAppleId does not match the configured app")) {
            try verifier.checkAppAppleId(1_235, rawEnvironment: "Production")
        }
        #expect(throws: VerificationError.self) { try verifier.checkAppAppleId(nil, rawEnvironment: "Production") }
        #expect(throws: Never.self) { try verifier.checkAppAppleId(1_235, rawEnvironment: "Sandbox") }
        let unconfigured = try harness.verifier(environment: .any)
        #expect(throws: Never.self) { try unconfigured.checkAppAppleId(1_235, rawEnvironment: "Production") }
    }

    @Test func renewalInfoChecksEnvironmentOnly() throws {
        let harness = try Harness()
        let info = try harness.pki.signer.sign(payloadJSON: """
            {"originalTransactionId":"2000000000000001","autoRenewProductId":"com.example.app.pro.yearly",\
            "productId":"com.example.app.pro.monthly","autoRenewStatus":1,"expirationIntent":2,"priceIncreaseStatus":1,\
            "isInBillingRetryPeriod":true,"gracePeriodExpiresDate":1735700000000,"signedDate":\(TestClock.insideMilliseconds),\
            "environment":"Sandbox","renewalDate":1738367400000,"renewalPrice":9990,"currency":"USD",\
            "eligibleWinBackOfferIds":["a","b"],"offerType":4,"offerDiscountType":"FREE_TRIAL"}
            """)
        let decoded = try harness.verifier(bundleIds: ["com.unrelated"]).verifyAndDecodeRenewalInfo(info).get()
        #expect(decoded.autoRenewStatus == .on)
        #expect(decoded.expirationIntent == .billingError)
        #expect(decoded.priceIncreaseStatus == .customerConsentedOrWasNotifiedWithoutNeedingConsent)
        #expect(decoded.isInBillingRetryPeriod == true)
        #expect(decoded.gracePeriodExpiresDate == Date(millisecondsSince1970: 1_735_700_000_000))
        #expect(decoded.eligibleWinBackOfferIds == ["a", "b"])
        #expect(decoded.offerType == .winBackOffer)
        #expect(decoded.offerDiscountType == .freeTrial)
        #expect(decoded.renewalPrice == 9990)
        #expect(try harness.verifier(environment: .production).verifyAndDecodeRenewalInfo(info).code == "environment-mismatch")
        let noEnvironment = try harness.pki.signer.sign(payloadJSON: "{\"signedDate\":\(TestClock.insideMilliseconds)}")
        #expect(try harness.verifier().verifyAndDecodeRenewalInfo(noEnvironment).code == "missing-field")
        let badList = try harness.pki.signer.sign(payloadJSON: "{\"environment\":\"Sandbox\",\"eligibleWinBackOfferIds\":[1]}")
        #expect(try harness.verifier().verifyAndDecodeRenewalInfo(badList).code == "invalid-field")
    }

    @Test func decodesApplesModelFixture() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        // Apple's own field-mapping fixture (LocalTesting), signed by the test PKI.
        let harness = try Harness()
        let json = try Vectors.text("peer-apple-python/models/signedTransaction.json")
        let jws = try harness.pki.signer.sign(payloadJSON: json)
        let verifier = try harness.verifier(bundleIds: ["com.example"], environment: .sandbox, allowedTestEnvironments: [.localTesting],
                                            clock: { Date(millisecondsSince1970: 1_698_148_900_000) })
        // signedDate 2023-10-24 is before the test PKI's window.
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "certificate-not-yet-valid")
        let wide = try Harness(validFrom: Date(timeIntervalSince1970: 1_600_000_000), validUntil: TestClock.validUntil)
        let t = try wide.verifier(bundleIds: ["com.example"], environment: .sandbox, allowedTestEnvironments: [.localTesting])
            .verifyAndDecodeTransaction(try wide.pki.signer.sign(payloadJSON: json)).get()
        #expect(t.transactionId == "23456")
        #expect(t.originalTransactionId == "12345")
        #expect(t.revocationDate == Date(millisecondsSince1970: 1_698_148_950_000))
        #expect(t.revocationReason == .appIssue)
        #expect(t.price == 10990)
        #expect(t.currency == "USD")
        #expect(t.environment == .localTesting)
        #expect(t.offerDiscountType == .payAsYouGo)
        #expect(t.offerIdentifier == "abc.123")
        #expect(t.isUpgraded == true)
        #expect(t.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
    }
}
