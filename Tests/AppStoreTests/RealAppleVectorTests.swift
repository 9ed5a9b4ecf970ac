import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Real Apple-signed JWS from `../shared/vectors/apple/` (see its README): every transaction and
/// renewal info verifies at its `signedDate` with the bundled Apple Root CA - G3.
@Suite struct RealAppleVectorTests {
    struct TransactionCase: Sendable, CustomTestStringConvertible {
        let file: String
        let bundleId: String
        let environment: AppStoreEnvironmentPolicy
        let wrongEnvironment: AppStoreEnvironmentPolicy
        let transactionId: String
        let originalTransactionId: String
        let productId: String
        let type: ProductType
        let signedDate: Int64
        var testDescription: String { file }
    }

    static let transactions: [TransactionCase] = [
        .init(file: "01a-sandbox-transaction-REFUNDED-revoked.jws", bundleId: "com.loki-project.loki-messenger",
              environment: .sandbox, wrongEnvironment: .production, transactionId: "2000001032604840",
              originalTransactionId: "2000001024993299", productId: "com.getsession.org.pro_sub", type: .autoRenewable,
              signedDate: 1_760_592_122_788),
        .init(file: "02a-sandbox-transaction-from-DID_RENEW.jws", bundleId: "com.loki-project.loki-messenger",
              environment: .sandbox, wrongEnvironment: .production, transactionId: "2000001024998954",
              originalTransactionId: "2000001024993299", productId: "com.getsession.org.pro_sub", type: .autoRenewable,
              signedDate: 1_759_302_518_835),
        .init(file: "06-sandbox-transaction-autorenew-2022.jws", bundleId: "Com.VoiceRecording.Telephone",
              environment: .sandbox, wrongEnvironment: .production, transactionId: "2000000184445477",
              originalTransactionId: "2000000184445477", productId: "Com.VoiceRecording.Telephone.103",
              type: .autoRenewable, signedDate: 1_667_559_685_499),
        .init(file: "08a-sandbox-transaction-from-DID_RENEW-2022.jws", bundleId: "com.audaos.audarecorder",
              environment: .sandbox, wrongEnvironment: .production, transactionId: "2000000004047119",
              originalTransactionId: "2000000000842607", productId: "com.audaos.audarecorder.vip.m2",
              type: .autoRenewable, signedDate: 1_646_387_008_254),
        .init(file: "09a-production-transaction-from-CONSUMPTION_REQUEST.jws", bundleId: "com.jrjj.keysns",
              environment: .production, wrongEnvironment: .sandbox, transactionId: "510001261072921",
              originalTransactionId: "510001261072921", productId: "com.keysns.JR1200", type: .consumable,
              signedDate: 1_687_941_512_573),
    ]

    /// A wall clock far after every leaf expired: verification must use `signedDate`, not "now".
    static let now: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_796_000_000) }

    @Test func bundledRootIsAppleRootCAG3() throws {
        let root = AppleRootCertificates.appleRootCAG3
        #expect(root.sha256Fingerprint == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
        #expect(root.subject.contains("Apple Root CA - G3"))
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        #expect(root.derBytes == (try Vectors.bytes("apple/certs/AppleRootCA-G3.cer")))
    }

    @Test(arguments: transactions)
    func transactionVerifiesAtSignedDate(_ vector: TransactionCase) throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let jws = try Vectors.text("apple/jws/\(vector.file)")
        let verifier = try SignedDataVerifier(configuration: .init(
            bundleIds: [vector.bundleId], environment: vector.environment), clock: Self.now)
        let transaction = try verifier.verifyAndDecodeTransaction(jws).get()
        #expect(transaction.transactionId == vector.transactionId)
        #expect(transaction.originalTransactionId == vector.originalTransactionId)
        #expect(transaction.productId == vector.productId)
        #expect(transaction.bundleId == vector.bundleId)
        #expect(transaction.type == vector.type)
        #expect(transaction.signedDate == Date(millisecondsSince1970: vector.signedDate))
        #expect(transaction.signedDate?.millisecondsSince1970 == vector.signedDate)
    }

    @Test(arguments: transactions)
    func transactionRejectedWithWrongClaims(_ vector: TransactionCase) throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let jws = try Vectors.text("apple/jws/\(vector.file)")
        let wrongBundle = try SignedDataVerifier(configuration: .init(bundleIds: ["com.example.other"], environment: vector.environment))
        #expect(wrongBundle.verifyAndDecodeTransaction(jws).code == "bundle-id-mismatch")
        let lowercased = try SignedDataVerifier(configuration: .init(bundleIds: [vector.bundleId.lowercased() == vector.bundleId
            ? vector.bundleId.uppercased() : vector.bundleId.lowercased()], environment: vector.environment))
        #expect(lowercased.verifyAndDecodeTransaction(jws).code == "bundle-id-mismatch")
        let wrongEnvironment = try SignedDataVerifier(configuration: .init(bundleIds: [vector.bundleId], environment: vector.wrongEnvironment))
        #expect(wrongEnvironment.verifyAndDecodeTransaction(jws).code == "environment-mismatch")
        let foreignRoot = try Harness()
        let untrusted = try SignedDataVerifier(configuration: .init(trustAnchors: [foreignRoot.pki.root], environment: .any))
        #expect(untrusted.verifyAndDecodeTransaction(jws).code == "untrusted-root")
    }

    @Test func revokedTransactionDecodesRevocation() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let verifier = try SignedDataVerifier(configuration: .init(environment: .sandbox))
        let transaction = try verifier.verifyAndDecodeTransaction(
            try Vectors.text("apple/jws/01a-sandbox-transaction-REFUNDED-revoked.jws")).get()
        #expect(transaction.isRevoked)
        #expect(transaction.revocationReason == .other)
        #expect(transaction.revocationDate == Date(timeIntervalSince1970: 1_760_591_999))
        #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_760_335_129))
        #expect(transaction.expiresDate == Date(timeIntervalSince1970: 1_760_335_309))
        #expect(transaction.environment == .sandbox)
        #expect(transaction.price == 1990)
        #expect(transaction.currency == "AUD")
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.appTransactionId == "704897469903383919")
    }

    @Test func olderTransactionsDecodeOptionalFields() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let verifier = try SignedDataVerifier(configuration: .init(environment: .any))
        let voice = try verifier.verifyAndDecodeTransaction(try Vectors.text("apple/jws/06-sandbox-transaction-autorenew-2022.jws")).get()
        #expect(voice.appAccountToken == UUID(uuidString: "207262da-1ac8-4e0a-a399-5aa62a82800f"))
        #expect(voice.offerType == .introductoryOffer)
        #expect(voice.expiresDate == Date(timeIntervalSince1970: 1_666_615_993))
        #expect(voice.transactionReason == nil)
        let production = try verifier.verifyAndDecodeTransaction(
            try Vectors.text("apple/jws/09a-production-transaction-from-CONSUMPTION_REQUEST.jws")).get()
        #expect(production.environment == .production)
        #expect(production.storefront == "CHN")
        #expect(production.quantity == 1)
        #expect(production.expiresDate == nil)
    }

    @Test func appAppleIdIsIgnoredForTransactions() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let jws = try Vectors.text("apple/jws/09a-production-transaction-from-CONSUMPTION_REQUEST.jws")
        for appAppleId: Int64 in [1_601_830_814, 1_234] {
            let verifier = try SignedDataVerifier(configuration: .init(bundleIds: ["com.jrjj.keysns"], appAppleId: appAppleId))
            #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        }
    }

    @Test(arguments: [
        ("01b-sandbox-renewalinfo-from-REFUND.jws", "2000001024993299", Int64(1_760_592_122_788)),
        ("02b-sandbox-renewalinfo-from-DID_RENEW.jws", "2000001024993299", Int64(1_759_302_518_835)),
        ("07-sandbox-renewalinfo-2022.jws", "2000000184445477", Int64(1_667_561_039_251)),
        ("08b-sandbox-renewalinfo-from-DID_RENEW-2022.jws", "2000000000842607", Int64(1_646_387_008_228)),
        ("10-sandbox-renewalinfo-2023.jws", "2000000335310644", Int64(1_684_822_778_492)),
    ])
    func renewalInfoVerifies(_ file: String, _ originalTransactionId: String, _ signedDate: Int64) throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let jws = try Vectors.text("apple/jws/\(file)")
        // Renewal infos have no bundleId: a wrong bundle id still verifies (Apple's rule).
        let verifier = try SignedDataVerifier(configuration: .init(bundleIds: ["com.example.other"], environment: .sandbox),
                                              clock: Self.now)
        let info = try verifier.verifyAndDecodeRenewalInfo(jws).get()
        #expect(info.originalTransactionId == originalTransactionId)
        #expect(info.signedDate?.millisecondsSince1970 == signedDate)
        #expect(info.environment == .sandbox)
        let production = try SignedDataVerifier(configuration: .init(environment: .production))
        #expect(production.verifyAndDecodeRenewalInfo(jws).code == "environment-mismatch")
    }

    @Test func renewalInfoFieldsDecode() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let verifier = try SignedDataVerifier(configuration: .init(environment: .sandbox))
        let refund = try verifier.verifyAndDecodeRenewalInfo(try Vectors.text("apple/jws/01b-sandbox-renewalinfo-from-REFUND.jws")).get()
        #expect(refund.autoRenewStatus == .on)
        #expect(refund.autoRenewProductId == "com.getsession.org.pro_sub_3_months")
        #expect(refund.renewalPrice == 5990)
        #expect(refund.renewalDate == Date(timeIntervalSince1970: 1_760_592_314))
        let old = try verifier.verifyAndDecodeRenewalInfo(try Vectors.text("apple/jws/07-sandbox-renewalinfo-2022.jws")).get()
        #expect(old.expirationIntent == .customerCancelled)
        #expect(old.autoRenewStatus == .off)
        #expect(old.isInBillingRetryPeriod == false)
    }

    @Test func realChainIsCheckedAtSignedDateAgainstCachedWindows() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        // 06 and 07 share the 2021-2023 leaf; the second one hits the cache.
        let verifier = try SignedDataVerifier(configuration: .init(environment: .sandbox), clock: Self.now)
        #expect(verifier.verifyAndDecodeTransaction(try Vectors.text("apple/jws/06-sandbox-transaction-autorenew-2022.jws")).code == "valid")
        #expect(verifier.verifyAndDecodeRenewalInfo(try Vectors.text("apple/jws/07-sandbox-renewalinfo-2022.jws")).code == "valid")
        #expect(verifier.cacheStatistics.builds == 1)
    }
}
