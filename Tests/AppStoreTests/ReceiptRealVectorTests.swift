import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The six real receipts of `../shared/vectors/apple/receipts` reach the README's verdicts with
/// the bundled Apple Inc. Root: r1–r5 valid at their creation date with every field equal to
/// `*.parsed.json`; r6 (Xcode, self-signed) rejected; all of r1–r5 rejected when checked "now".
@Suite struct ReceiptRealVectorTests {
    @Test(arguments: ReceiptVectors.appleReceipts)
    func verifiesAtCreationDateWithEveryField(_ name: String) throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let json = try ReceiptVectors.parsed(name)
        let bundleId = try #require(json["bundle_id"] as? String)
        let verifier = try AppReceiptVerifier(configuration: .init(bundleIds: [bundleId]), clock: ReceiptVectors.clock)
        let result = verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.base64(name))
        #expect(result.receiptCode == "valid", "\(name): \(String(describing: result.error))")
        let receipt = try result.get()
        try Self.expectEqual(receipt, json, name)
    }

    @Test func purchaseCountsMatchTheReadme() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let verifier = try AppReceiptVerifier(clock: ReceiptVectors.clock)
        let counts = try ReceiptVectors.appleReceipts.map { try verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.base64($0)).get().inAppPurchases.count }
        #expect(counts == [2, 4, 187, 0, 1])
        let r3 = try verifier.verifyAndDecodeAppReceipt(try ReceiptVectors.base64(ReceiptVectors.appleReceipts[2])).get()
        let products = Dictionary(grouping: r3.inAppPurchases, by: { $0.productId ?? "" }).mapValues(\.count)
        #expect(products == ["com.nutcallalert.inapp.optimum": 116, "com.nutcallalert.inapp.pro": 39, "com.nutcallalert.inapp.lite": 32])
        #expect(r3.inAppPurchases.allSatisfy { $0.productType == .autoRenewable })
    }

    @Test func xcodeReceiptIsRejectedAsUntrusted() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let r6 = try ReceiptVectors.base64(ReceiptVectors.xcodeReceipt)
        let verifier = try AppReceiptVerifier(clock: ReceiptVectors.clock)
        #expect(verifier.verifyAndDecodeAppReceipt(r6).receiptCode == "untrusted-root")
        // Even when Xcode receipts are explicitly allowed, the self-signed chain is not trusted.
        let permissive = try AppReceiptVerifier(configuration: .init(allowedTestEnvironments: [.xcode]), clock: ReceiptVectors.clock)
        #expect(permissive.verifyAndDecodeAppReceipt(r6).receiptCode == "untrusted-root")
        // Its payload parses (BER envelope, "+0100" dates), so the Server API path can read it.
        #expect(try ReceiptUtility.extractTransactionIds(appReceipt: r6) == ["0"])
        let json = try ReceiptVectors.parsed(ReceiptVectors.xcodeReceipt)
        let container = try AppReceiptVerifierCore.open(r6, limits: .init())
        let receipt = try ReceiptPayloadParser.parse(container.content)
        try Self.expectEqual(receipt, json, ReceiptVectors.xcodeReceipt)
        #expect(receipt.receiptType == .xcode && receipt.environment == .xcode)
    }

    @Test(arguments: ReceiptVectors.appleReceipts)
    func checkingAtNowRejects(_ name: String) throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let receipt = try ReceiptVectors.base64(name)
        let atNow = try AppReceiptVerifier(configuration: .init(validityDate: .currentTime), clock: ReceiptVectors.clock)
        #expect(atNow.verifyAndDecodeAppReceipt(receipt).receiptCode == "certificate-expired")
        // The default (creation date) ignores the clock entirely, even decades later.
        let later = try AppReceiptVerifier(clock: { Date(timeIntervalSince1970: 4_000_000_000) })
        #expect(later.verifyAndDecodeAppReceipt(receipt).receiptCode == "valid")
    }

    @Test func rootCarriedInsideTheReceiptIsNeverTrusted() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let r1 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[0])
        // r1 embeds Apple Inc. Root itself; with only Root G3 configured it must not verify.
        let g3Only = try AppReceiptVerifier(configuration: .init(trustAnchors: [AppleRootCertificates.appleRootCAG3]),
                                            clock: ReceiptVectors.clock)
        #expect(g3Only.verifyAndDecodeAppReceipt(r1).receiptCode == "untrusted-root")
        let testCAOnly = try AppReceiptVerifier(configuration: .init(trustAnchors: [try ReceiptVectors.testRoot()]),
                                                clock: ReceiptVectors.clock)
        #expect(testCAOnly.verifyAndDecodeAppReceipt(r1).receiptCode == "untrusted-root")
    }

    @Test func claimsAreCheckedExactly() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let r2 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[1])   // Production, org.getpure.pure-iphone
        let r5 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[4])   // ProductionSandbox, com.XMCodey.apple.ClipTrace
        func code(_ receipt: String, _ configuration: AppReceiptVerifierConfiguration) throws -> String {
            try AppReceiptVerifier(configuration: configuration, clock: ReceiptVectors.clock).verifyAndDecodeAppReceipt(receipt).receiptCode
        }
        #expect(try code(r2, .init(bundleIds: ["com.example.other"])) == "bundle-id-mismatch")
        #expect(try code(r5, .init(bundleIds: ["com.xmcodey.apple.cliptrace"])) == "bundle-id-mismatch")
        #expect(try code(r5, .init(bundleIds: ["com.XMCodey.apple.ClipTrace"])) == "valid")
        #expect(try code(r2, .init(environment: .production)) == "valid")
        #expect(try code(r2, .init(environment: .sandbox)) == "environment-mismatch")
        #expect(try code(r5, .init(environment: .production)) == "environment-mismatch")
        #expect(try code(r5, .init(environment: .sandbox)) == "valid")
    }

    @Test func receiptUtilityExtractsIdsWithoutVerifying() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        let r1 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[0])
        #expect(try ReceiptUtility.extractTransactionIds(appReceipt: r1) == ["2000001092134138", "2000001092148094"])
        #expect(ReceiptUtility.extractTransactionId(appReceipt: r1) == "2000001092134138")
        let r4 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[3])
        #expect(try ReceiptUtility.extractTransactionIds(appReceipt: r4).isEmpty)
        #expect(ReceiptUtility.extractTransactionId(appReceipt: r4) == nil)
        let r3 = try ReceiptVectors.base64(ReceiptVectors.appleReceipts[2])
        #expect(try ReceiptUtility.extractTransactionIds(appReceipt: r3).count == 187)
    }

    @Test func realChainsCarryTheAppleMarkers() throws {
        guard ReceiptVectors.available else { print(Vectors.skipMessage); return }
        for name in ReceiptVectors.appleReceipts {
            let container = try AppReceiptVerifierCore.open(try ReceiptVectors.base64(name), limits: .init())
            let chain = try ReceiptChainVerifier(trustAnchors: [AppleRootCertificates.appleIncRoot], strict: true).verify(container)
            #expect(chain.certificates[0].hasExtension(oid: ChainVerifier.leafOID))
            #expect(chain.certificates[1].hasExtension(oid: ChainVerifier.intermediateOID))
            #expect(chain.certificates[2] == AppleRootCertificates.appleIncRoot)
            #expect(chain.certificates[1].subject.contains("Apple Worldwide Developer Relations Certification Authority"))
        }
    }

    // MARK: - comparison with *.parsed.json

    static let receiptKeys: Set<String> = ["receipt_type", "other_attribute_types", "bundle_id", "application_version",
                                           "receipt_creation_date", "in_app", "original_purchase_date",
                                           "original_application_version", "expiration_date"]
    static let purchaseKeys: Set<String> = ["quantity", "product_id", "transaction_id", "purchase_date", "original_transaction_id",
                                            "original_purchase_date", "expires_date", "web_order_line_item_id", "cancellation_date",
                                            "is_in_intro_offer_period", "undocumented_1707", "undocumented_1713", "undocumented_1721"]

    /// Every attribute of the JSON equals the decoded receipt; no JSON key goes unchecked.
    static func expectEqual(_ receipt: AppReceipt, _ json: [String: Any], _ name: String) throws {
        #expect(Set(json.keys).isSubset(of: receiptKeys), "\(name): unchecked keys")
        #expect(receipt.rawReceiptType == json["receipt_type"] as? String)
        #expect(receipt.bundleId == json["bundle_id"] as? String)
        #expect(receipt.applicationVersion == json["application_version"] as? String)
        #expect(receipt.originalApplicationVersion == json["original_application_version"] as? String)
        #expect(receipt.receiptCreationDate == ReceiptVectors.date(json["receipt_creation_date"]) ?? nil)
        #expect(receipt.originalPurchaseDate == ReceiptVectors.date(json["original_purchase_date"]) ?? nil)
        #expect(receipt.expirationDate == ReceiptVectors.date(json["expiration_date"]) ?? nil)
        #expect(receipt.receiptCreationDate != nil)
        var otherTypes = Set(receipt.otherAttributes.map(\.type))
        if receipt.opaqueValue != nil { otherTypes.insert(4) }
        if receipt.sha1Hash != nil { otherTypes.insert(5) }
        #expect(otherTypes == Set(try #require(json["other_attribute_types"] as? [Int]).map(Int64.init)), "\(name)")

        let purchases = json["in_app"] as? [[String: Any]] ?? []
        #expect(receipt.inAppPurchases.count == purchases.count, "\(name)")
        for (purchase, expected) in zip(receipt.inAppPurchases, purchases) {
            let documented = Set(expected.keys).filter { !$0.hasPrefix("undocumented_") || purchaseKeys.contains($0) }
            #expect(documented.isSubset(of: purchaseKeys), "\(name): unchecked keys \(documented.subtracting(purchaseKeys))")
            #expect(purchase.quantity == (expected["quantity"] as? Int).map(Int64.init))
            #expect(purchase.productId == expected["product_id"] as? String)
            #expect(purchase.transactionId == expected["transaction_id"] as? String)
            #expect(purchase.originalTransactionId == expected["original_transaction_id"] as? String)
            #expect(purchase.purchaseDate == ReceiptVectors.date(expected["purchase_date"]) ?? nil)
            #expect(purchase.originalPurchaseDate == ReceiptVectors.date(expected["original_purchase_date"]) ?? nil)
            #expect(purchase.expiresDate == ReceiptVectors.date(expected["expires_date"]) ?? nil)
            #expect(purchase.cancellationDate == ReceiptVectors.date(expected["cancellation_date"]) ?? nil)
            #expect(purchase.webOrderLineItemId == (expected["web_order_line_item_id"] as? Int).map(Int64.init))
            #expect(purchase.isInIntroOfferPeriod == (expected["is_in_intro_offer_period"] as? Int).map { $0 != 0 })
            #expect(purchase.rawProductType == (expected["undocumented_1707"] as? Int).map(Int64.init))
            #expect(purchase.isTrialPeriod == (expected["undocumented_1713"] as? Int).map { $0 != 0 })
            #expect(purchase.promotionalOfferId == expected["undocumented_1721"] as? String)
            // Undocumented attributes are kept raw and still hold exactly what was signed.
            for (key, value) in expected where key.hasPrefix("undocumented_") && !purchaseKeys.contains(key) {
                let type = try #require(Int64(key.dropFirst("undocumented_".count)))
                let raw = purchase.otherAttributes(ofType: type)
                #expect(raw.count == 1, "\(name): \(key)")
                if let number = value as? Int { #expect(raw.first?.integerValue == Int64(number), "\(name): \(key)") }
                if let text = value as? String { #expect(raw.first?.stringValue == text, "\(name): \(key)") }
            }
        }
    }
}
