import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Receipts signed by a test CA generated with the openssl CLI (`Resources/make-receipt-fixtures.sh`):
/// rejected with the default anchors, accepted once the CA is configured, and every chain, date
/// and claim rule exercised on openssl-made inputs.
@Suite struct ReceiptFixtureTests {
    @Test func testCAReceiptNeedsItsAnchor() throws {
        let receipt = try ReceiptVectors.fixture("valid")
        let defaults = try AppReceiptVerifier(clock: ReceiptVectors.clock)
        #expect(defaults.configuration.trustAnchors == [AppleRootCertificates.appleIncRoot])
        #expect(defaults.verifyAndDecodeAppReceipt(receipt).receiptCode == "untrusted-root")
        let configured = try ReceiptVectors.testVerifier()
        #expect(configured.verifyAndDecodeAppReceipt(receipt).receiptCode == "valid")
        // Several anchors: any one may terminate the chain.
        let both = try ReceiptVectors.testVerifier { $0.trustAnchors = [AppleRootCertificates.appleIncRoot, try ReceiptVectors.testRoot()] }
        #expect(both.verifyAndDecodeAppReceipt(receipt).receiptCode == "valid")
    }

    @Test func decodesEveryAttribute() throws {
        let receipt = try ReceiptVectors.testVerifier().verifyAndDecodeAppReceipt(try ReceiptVectors.fixture("valid")).get()
        #expect(receipt.rawReceiptType == "ProductionSandbox" && receipt.receiptType == .productionSandbox)
        #expect(receipt.environment == .sandbox)
        #expect(receipt.bundleId == "com.example.receipts")
        #expect(receipt.bundleIdData == [0x0C, 0x14] + Array("com.example.receipts".utf8))
        #expect(receipt.applicationVersion == "7.1")
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.opaqueValue == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(receipt.sha1Hash?.count == 20)
        #expect(receipt.receiptCreationDate == Date(timeIntervalSince1970: 1_735_689_600))
        #expect(receipt.originalPurchaseDate == Date(timeIntervalSince1970: 1_717_243_200))
        #expect(receipt.expirationDate == nil)
        #expect(receipt.otherAttributes == [ReceiptAttribute(type: 9999, version: 1, value: [0x0C, 0x10] + Array("future attribute".utf8))])
        #expect(receipt.otherAttributes(ofType: 9999).first?.stringValue == "future attribute")
        #expect(receipt.inAppPurchases.count == 2)

        let monthly = try #require(receipt.inAppPurchases.first { $0.transactionId == "4000000000000001" })
        #expect(monthly.productId == "com.example.receipts.monthly")
        #expect(monthly.quantity == 1)
        #expect(monthly.originalTransactionId == "4000000000000001")
        #expect(monthly.purchaseDate == Date(timeIntervalSince1970: 1_733_047_200))
        #expect(monthly.originalPurchaseDate == Date(timeIntervalSince1970: 1_733_047_200))
        #expect(monthly.expiresDate == Date(timeIntervalSince1970: 1_735_725_600))
        #expect(monthly.cancellationDate == nil)
        #expect(monthly.webOrderLineItemId == 4_000_000_012_345_678)
        #expect(monthly.isTrialPeriod == true && monthly.isInIntroOfferPeriod == false)
        #expect(monthly.rawProductType == 3 && monthly.productType == .autoRenewable)
        #expect(monthly.promotionalOfferId == nil && monthly.otherAttributes.isEmpty)

        let coins = try #require(receipt.inAppPurchases.first { $0.transactionId == "4000000000000002" })
        #expect(coins.productId == "com.example.receipts.coins" && coins.quantity == 3)
        #expect(coins.originalTransactionId == nil && coins.expiresDate == nil && coins.productType == nil)
        // 2024-12-24T18:30:00.250+01:00
        #expect(coins.purchaseDate == Date(timeIntervalSince1970: 1_735_061_400.25))
        #expect(coins.cancellationDate == Date(timeIntervalSince1970: 1_735_084_800))
        #expect(coins.promotionalOfferId == "winter-offer")
        #expect(coins.otherAttributes(ofType: 1799).first?.integerValue == -5)
        #expect(coins.isTrialPeriod == nil)
    }

    @Test(arguments: [
        ("signed-attributes", "valid"),              // CMS signed attributes with messageDigest
        ("sha1", "valid"),                           // SHA-1 content digest, as on pre-2023 receipts
        ("md5", "receipt-signature-invalid"),
        ("leaf-without-oid", "missing-apple-oid"),
        ("intermediate-without-oid", "missing-apple-oid"),
        ("leaf-under-root", "invalid-chain"),        // two-level path: no WWDR-shaped intermediate
        ("self-signed", "untrusted-root"),           // like Xcode's StoreKit certificate
        ("signed-by-intermediate", "invalid-chain"), // same certificates, the CA key signs
        ("expired-at-creation", "certificate-expired"),
        ("not-yet-valid-at-creation", "certificate-not-yet-valid"),
        ("invalid-date", "invalid-date"),
        ("no-bundle-id", "missing-field"),
        ("bundle-id-integer", "invalid-field"),
        ("duplicate-bundle-id", "invalid-receipt"),
        ("xcode-type", "environment-mismatch"),
        ("deep-content", "invalid-receipt"),
        ("certs-only", "invalid-receipt"),
        ("detached", "invalid-receipt"),
    ])
    func fixtureVerdict(_ name: String, _ expected: String) throws {
        let verifier = try ReceiptVectors.testVerifier()
        let result = verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.fixture(name))
        #expect(result.receiptCode == expected, "\(name): \(String(describing: result.error))")
    }

    @Test func missingCreationDateFallsBackToTheClock() throws {
        let receipt = try ReceiptVectors.fixture("no-creation-date")
        let inside = try ReceiptVectors.testVerifier()
        #expect(inside.verifyAndDecodeAppReceipt(receipt).receiptCode == "certificate-expired")   // clock 2026-11-30
        let early = try AppReceiptVerifier(configuration: .init(trustAnchors: [try ReceiptVectors.testRoot()]),
                                           clock: { Date(timeIntervalSince1970: 1_735_689_600) })
        #expect(early.verifyAndDecodeAppReceipt(receipt).receiptCode == "valid")
    }

    @Test func validityDatePolicyUsesTheClock() throws {
        let receipt = try ReceiptVectors.fixture("valid")
        let atNow = try ReceiptVectors.testVerifier { $0.validityDate = .currentTime }
        #expect(atNow.verifyAndDecodeAppReceipt(receipt).receiptCode == "certificate-expired")
        let inWindow = try AppReceiptVerifier(configuration: .init(trustAnchors: [try ReceiptVectors.testRoot()], validityDate: .currentTime),
                                              clock: { Date(timeIntervalSince1970: 1_750_000_000) })
        #expect(inWindow.verifyAndDecodeAppReceipt(receipt).receiptCode == "valid")
    }

    @Test func claimPolicies() throws {
        let receipt = try ReceiptVectors.fixture("valid")
        #expect(try ReceiptVectors.testVerifier(bundleIds: []).verifyAndDecodeAppReceipt(receipt).receiptCode == "valid")
        #expect(try ReceiptVectors.testVerifier(bundleIds: ["com.example.other"]).verifyAndDecodeAppReceipt(receipt).receiptCode == "bundle-id-mismatch")
        #expect(try ReceiptVectors.testVerifier(bundleIds: ["com.example.Receipts"]).verifyAndDecodeAppReceipt(receipt).receiptCode == "bundle-id-mismatch")
        #expect(try ReceiptVectors.testVerifier { $0.environment = .production }.verifyAndDecodeAppReceipt(receipt).receiptCode == "environment-mismatch")
        let xcode = try ReceiptVectors.fixture("xcode-type")
        #expect(try ReceiptVectors.testVerifier { $0.allowedTestEnvironments = [.xcode] }.verifyAndDecodeAppReceipt(xcode).receiptCode == "valid")
    }

    @Test func receiptUtilityOnFixtures() throws {
        #expect(try ReceiptUtility.extractTransactionIds(appReceipt: try ReceiptVectors.fixture("valid")).sorted()
                == ["4000000000000001", "4000000000000002"])
        // Parse only: an untrusted signer does not matter, a malformed payload does.
        #expect(try ReceiptUtility.extractTransactionIds(appReceipt: try ReceiptVectors.fixture("self-signed")).count == 2)
        #expect(throws: VerificationError(.invalidReceipt, "receipt payload: attribute: unexpected ASN.1 tag 0x31")) {
            try ReceiptUtility.extractTransactionIds(appReceipt: try ReceiptVectors.fixture("deep-content"))
        }
        #expect(ReceiptUtility.extractTransactionId(appReceipt: "not base64") == nil)
        #expect(ReceiptUtility.extractTransactionId(appReceipt: try ReceiptVectors.fixture("certs-only")) == nil)
    }
}
