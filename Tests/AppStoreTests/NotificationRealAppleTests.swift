import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The real Apple notifications of `../shared/vectors/apple/jws/` (01-05, 08, 09, 11) reach the
/// verdicts of its README, outer and nested, with the bundled Apple Root CA - G3.
@Suite struct NotificationRealAppleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let file: String
        let bundleId: String
        let environment: AppStoreEnvironmentPolicy
        let wrongEnvironment: AppStoreEnvironmentPolicy
        let appAppleId: Int64?
        let type: NotificationTypeV2
        let subtype: Subtype?
        let uuid: String
        let signedDate: Int64?
        /// The nested JWS files extracted from this notification (byte-identical to `data`'s strings).
        let nestedTransaction: String?
        let nestedRenewal: String?
        let effect: NotificationEffect
        /// The clock: far after every leaf expired, except for 08 (no signedDate), where it is the
        /// notification's send time so that the genuine chain is inside its validity.
        var clock: @Sendable () -> Date { file.hasPrefix("08") ? Self.march2022 : RealAppleVectorTests.now }
        var testDescription: String { file }

        static let march2022: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_646_387_010) }
        static func informational(_ type: String) -> NotificationEffect { .informational(notificationType: type, subtype: nil) }
    }

    static let session = "com.loki-project.loki-messenger"
    static let cases: [Case] = [
        .init(file: "01-sandbox-notification-REFUND.jws", bundleId: session, environment: .sandbox, wrongEnvironment: .production,
              appAppleId: 1_470_168_868, type: .refund, subtype: nil, uuid: "caeda1df-9950-458d-87a7-93bb009e7391",
              signedDate: 1_760_592_122_788, nestedTransaction: "01a-sandbox-transaction-REFUNDED-revoked.jws",
              nestedRenewal: "01b-sandbox-renewalinfo-from-REFUND.jws", effect: .revoke),
        .init(file: "02-sandbox-notification-DID_RENEW-2025.jws", bundleId: session, environment: .sandbox, wrongEnvironment: .production,
              appAppleId: 1_470_168_868, type: .didRenew, subtype: nil, uuid: "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7",
              signedDate: 1_759_302_518_835, nestedTransaction: "02a-sandbox-transaction-from-DID_RENEW.jws",
              nestedRenewal: "02b-sandbox-renewalinfo-from-DID_RENEW.jws", effect: .transactionUpdate),
        .init(file: "03-sandbox-notification-SUBSCRIBED-RESUBSCRIBE.jws", bundleId: session, environment: .sandbox,
              wrongEnvironment: .production, appAppleId: 1_470_168_868, type: .subscribed, subtype: .resubscribe,
              uuid: "9f9730f8-f3df-436a-b7e5-e85ef9c6afe4", signedDate: 1_759_388_776_941, nestedTransaction: nil,
              nestedRenewal: nil, effect: .transactionUpdate),
        .init(file: "04-sandbox-notification-EXPIRED-VOLUNTARY.jws", bundleId: session, environment: .sandbox,
              wrongEnvironment: .production, appAppleId: 1_470_168_868, type: .expired, subtype: .voluntary,
              uuid: "c7726298-32eb-48f7-9623-097ff6de4d69", signedDate: 1_759_389_041_604, nestedTransaction: nil,
              nestedRenewal: nil, effect: .expire),
        .init(file: "05-sandbox-notification-CONSUMPTION_REQUEST.jws", bundleId: session, environment: .sandbox,
              wrongEnvironment: .production, appAppleId: 1_470_168_868, type: .consumptionRequest, subtype: nil,
              uuid: "15101c57-7b3d-49c2-8adf-74ac2740ea8c", signedDate: 1_760_591_941_117, nestedTransaction: nil,
              nestedRenewal: nil, effect: Case.informational("CONSUMPTION_REQUEST")),
        .init(file: "08-sandbox-notification-DID_RENEW-2022-no-signedDate.jws", bundleId: "com.audaos.audarecorder",
              environment: .sandbox, wrongEnvironment: .production, appAppleId: nil, type: .didRenew, subtype: nil,
              uuid: "469bf30e-7715-4f9f-aae3-a7bfc12aea77", signedDate: nil,
              nestedTransaction: "08a-sandbox-transaction-from-DID_RENEW-2022.jws",
              nestedRenewal: "08b-sandbox-renewalinfo-from-DID_RENEW-2022.jws", effect: .transactionUpdate),
        .init(file: "09-production-notification-CONSUMPTION_REQUEST.jws", bundleId: "com.jrjj.keysns", environment: .production,
              wrongEnvironment: .sandbox, appAppleId: 1_601_830_814, type: .consumptionRequest, subtype: nil,
              uuid: "cbff6987-b8d9-43d8-b1dc-07fa8c9fd945", signedDate: 1_687_941_512_560,
              nestedTransaction: "09a-production-transaction-from-CONSUMPTION_REQUEST.jws", nestedRenewal: nil,
              effect: Case.informational("CONSUMPTION_REQUEST")),
        .init(file: "11-sandbox-notification-TEST.jws", bundleId: "com.Abilities", environment: .sandbox, wrongEnvironment: .production,
              appAppleId: nil, type: .test, subtype: nil, uuid: "5e09dcfc-205e-4ea1-9883-96676f394992",
              signedDate: 1_662_122_492_884, nestedTransaction: nil, nestedRenewal: nil, effect: Case.informational("TEST")),
    ]

    private func verifier(_ vector: Case, bundleIds: Set<String>? = nil, environment: AppStoreEnvironmentPolicy? = nil,
                          appAppleId: Int64? = nil, anchors: [X509Certificate]? = nil) throws -> SignedDataVerifier {
        try SignedDataVerifier(configuration: .init(
            trustAnchors: anchors ?? [AppleRootCertificates.appleRootCAG3], bundleIds: bundleIds ?? [vector.bundleId],
            appAppleId: appAppleId ?? vector.appAppleId, environment: environment ?? vector.environment), clock: vector.clock)
    }

    @Test(arguments: cases)
    func notificationVerifiesWithCorrectParameters(_ vector: Case) throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let jws = try Vectors.text("apple/jws/\(vector.file)")
        let notification = try verifier(vector).verifyAndDecodeNotification(jws).get()
        #expect(notification.notificationType == vector.type)
        #expect(notification.subtype == vector.subtype)
        #expect(notification.notificationUUID == vector.uuid)
        #expect(notification.version == "2.0")
        #expect(notification.signedDate?.millisecondsSince1970 == vector.signedDate)
        #expect(notification.bundleId == vector.bundleId)
        #expect(notification.appAppleId == vector.appAppleId)
        let data = try #require(notification.data)
        #expect(data.rawEnvironment == (vector.environment == .production ? "Production" : "Sandbox"))
        // Every nested JWS present was verified and decoded, and belongs to the notification.
        #expect((data.signedTransactionInfo != nil) == (data.transactionInfo != nil))
        #expect((data.signedRenewalInfo != nil) == (data.renewalInfo != nil))
        if let transaction = data.transactionInfo { #expect(transaction.bundleId == vector.bundleId) }
        if let nested = vector.nestedTransaction {
            #expect(data.signedTransactionInfo == (try Vectors.text("apple/jws/\(nested)")))
        }
        if let nested = vector.nestedRenewal {
            #expect(data.signedRenewalInfo == (try Vectors.text("apple/jws/\(nested)")))
        }
        #expect(NotificationEffect(notification) == vector.effect)
    }

    @Test(arguments: cases)
    func wrongParametersGiveApplesVerdicts(_ vector: Case) throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let jws = try Vectors.text("apple/jws/\(vector.file)")
        #expect(try verifier(vector, bundleIds: ["com.example.other"]).verifyAndDecodeNotification(jws).code == "bundle-id-mismatch")
        let otherCase: Set<String> = [vector.bundleId.lowercased() == vector.bundleId ? vector.bundleId.uppercased() : vector.bundleId.lowercased()]
        #expect(try verifier(vector, bundleIds: otherCase).verifyAndDecodeNotification(jws).code == "bundle-id-mismatch")
        // Wrong environment: Apple's INVALID_ENVIRONMENT, except that a Production verifier first
        // compares appAppleId, so notifications without one (11; 08 too) give INVALID_APP_IDENTIFIER.
        let configuredId: Int64 = vector.appAppleId ?? 1_234_567_890
        let wrongEnvironment = try verifier(vector, environment: vector.wrongEnvironment, appAppleId: configuredId)
        let expected = vector.wrongEnvironment == .production && vector.appAppleId == nil ? "app-apple-id-mismatch" : "environment-mismatch"
        #expect(wrongEnvironment.verifyAndDecodeNotification(jws).code == expected)
        let foreign = try Harness()
        #expect(try verifier(vector, anchors: [foreign.pki.root]).verifyAndDecodeNotification(jws).code == "untrusted-root")
    }

    @Test func productionNotificationNeedsItsAppAppleId() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let vector = try #require(Self.cases.first { $0.file.hasPrefix("09") })
        let jws = try Vectors.text("apple/jws/\(vector.file)")
        #expect(try verifier(vector, appAppleId: 1_601_830_814).verifyAndDecodeNotification(jws).code == "valid")
        #expect(try verifier(vector, appAppleId: 1_234).verifyAndDecodeNotification(jws).code == "app-apple-id-mismatch")
        // No appAppleId configured: not checked (configuration documents it as optional).
        let unconfigured = try SignedDataVerifier(configuration: .init(bundleIds: ["com.jrjj.keysns"]), clock: RealAppleVectorTests.now)
        #expect(unconfigured.verifyAndDecodeNotification(jws).code == "valid")
        // Its nested transaction (09a) ignores appAppleId, as a plain transaction does.
        let nested = try verifier(vector, appAppleId: 1_234).verifyAndDecodeTransaction(
            try Vectors.text("apple/jws/09a-production-transaction-from-CONSUMPTION_REQUEST.jws"))
        #expect(nested.code == "valid")
    }

    @Test func notificationWithoutSignedDateIsCheckedAtTheClock() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let vector = try #require(Self.cases.first { $0.file.hasPrefix("08") })
        let jws = try Vectors.text("apple/jws/\(vector.file)")
        // Apple's rule: no signedDate → now → the 2021-2023 leaf has expired.
        let now = try SignedDataVerifier(configuration: .init(bundleIds: [vector.bundleId], environment: .sandbox),
                                         clock: RealAppleVectorTests.now)
        let result = now.verifyAndDecodeNotification(jws)
        #expect(result.code == "certificate-expired")
        #expect(result.error?.detail.hasPrefix("data.") == false)          // the outer JWS failed, not a nested one
        // Its nested transaction and renewal info are valid at their own signedDate.
        #expect(now.verifyAndDecodeTransaction(try Vectors.text("apple/jws/\(vector.nestedTransaction!)")).code == "valid")
        #expect(now.verifyAndDecodeRenewalInfo(try Vectors.text("apple/jws/\(vector.nestedRenewal!)")).code == "valid")
        // Checked at its send time the notification is genuine.
        let notification = try verifier(vector).verifyAndDecodeNotification(jws).get()
        let transaction = try #require(notification.data?.transactionInfo)
        #expect(transaction.transactionId == "2000000004047119")
        #expect(transaction.originalTransactionId == "2000000000842607")
        #expect(transaction.productId == "com.audaos.audarecorder.vip.m2")
        #expect(transaction.expiresDate == Date(millisecondsSince1970: 1_646_387_196_000))
        #expect(transaction.signedDate == Date(millisecondsSince1970: 1_646_387_008_254))
        #expect(notification.data?.renewalInfo?.autoRenewStatus == .on)
        #expect(notification.data?.appAppleId == nil)
    }

    @Test func nestedPayloadFieldsDecode() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        func decode(_ prefix: String) throws -> NotificationData {
            let vector = try #require(Self.cases.first { $0.file.hasPrefix(prefix) })
            let notification = try verifier(vector).verifyAndDecodeNotification(try Vectors.text("apple/jws/\(vector.file)")).get()
            return try #require(notification.data)
        }
        let refund = try decode("01")
        let revoked = try #require(refund.transactionInfo)
        #expect(revoked.transactionId == "2000001032604840")
        #expect(revoked.originalTransactionId == "2000001024993299")
        #expect(revoked.revocationDate == Date(timeIntervalSince1970: 1_760_591_999))     // 2025-10-16T05:19:59Z
        #expect(revoked.revocationReason == .other)
        #expect(revoked.isRevoked)
        #expect(refund.renewalInfo?.autoRenewProductId == "com.getsession.org.pro_sub_3_months")
        #expect(refund.renewalInfo?.autoRenewStatus == .on)
        #expect(refund.status == .active)
        #expect(refund.bundleVersion == "637")

        let renew = try decode("02")
        let renewal = try #require(renew.transactionInfo)
        #expect(renewal.transactionId == "2000001024998954")
        #expect(renewal.transactionReason == .renewal)
        #expect(renewal.expiresDate == Date(timeIntervalSince1970: 1_759_302_732))         // 2025-10-01T07:12:12Z
        #expect(renewal.price == 1990)
        #expect(renewal.currency == "AUD")
        #expect(renewal.isRevoked == false)
        #expect(renew.renewalInfo?.renewalDate == Date(timeIntervalSince1970: 1_759_302_732))

        let resubscribe = try decode("03")
        #expect(resubscribe.transactionInfo?.transactionId == "2000001025686313")
        #expect(resubscribe.transactionInfo?.transactionReason == .purchase)

        let expired = try decode("04")
        #expect(expired.status == .expired)
        #expect(expired.renewalInfo?.expirationIntent == .customerCancelled)
        #expect(expired.renewalInfo?.autoRenewStatus == .off)
        #expect(expired.renewalInfo?.isInBillingRetryPeriod == false)

        let consumption = try decode("05")
        #expect(consumption.consumptionRequestReason == .unintendedPurchase)
        #expect(consumption.rawConsumptionRequestReason == "UNINTENDED_PURCHASE")

        let production = try decode("09")
        #expect(production.environment == .production)
        #expect(production.transactionInfo?.type == .consumable)
        #expect(production.transactionInfo?.storefront == "CHN")
        #expect(production.transactionInfo?.environment == .production)
        #expect(production.signedRenewalInfo == nil && production.renewalInfo == nil)

        let test = try decode("11")
        #expect(test.signedTransactionInfo == nil && test.transactionInfo == nil)
        #expect(test.bundleId == "com.Abilities")
    }

    @Test func outerAndNestedShareOneCachedChain() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let vector = Self.cases[0]
        let verifier = try verifier(vector)
        #expect(verifier.verifyAndDecodeNotification(try Vectors.text("apple/jws/\(vector.file)")).code == "valid")
        #expect(verifier.verifyAndDecodeNotification(try Vectors.text("apple/jws/\(Self.cases[1].file)")).code == "valid")
        #expect(verifier.cacheStatistics.builds == 1)             // 2 notifications + 4 nested JWS, one leaf
    }
}
