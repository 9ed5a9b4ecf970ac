import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Synthetic notifications signed with a ``TestPKI``: the nested JWS are verified under the same
/// policy and must belong to the notification; shapes, claims and unknown values.
@Suite struct NotificationSyntheticTests {
    typealias J = NotificationJSON

    @Test func genuineNotificationDecodesWithNestedPayloads() throws {
        let harness = try Harness()
        let jws = try harness.signNotification(type: "DID_RENEW", subtype: "BILLING_RECOVERY")
        let notification = try harness.verifier().verifyAndDecodeNotification(jws).get()
        #expect(notification.notificationType == .didRenew)
        #expect(notification.subtype == .billingRecovery)
        #expect(notification.notificationUUID == J.uuid)
        #expect(notification.signedDate == TestClock.inside)
        let data = try #require(notification.data)
        #expect(data.transactionInfo?.transactionId == "2000000000000002")
        #expect(data.renewalInfo?.autoRenewProductId == "com.example.app.pro.yearly")
        #expect(data.status == .active)
        #expect(data.bundleVersion == "42")
        #expect(NotificationEffect(notification) == .transactionUpdate)
    }

    @Test func forgedNestedTransactionRejectsTheNotification() throws {
        let harness = try Harness()
        let forger = try Harness(prefix: "forger")
        let (_, renewal) = try harness.signNested()
        let forged = try forger.signTransaction()
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "SUBSCRIBED", subtype: "INITIAL_BUY", containers: [("data", J.data(transaction: forged, renewal: renewal))]))
        let error = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
        #expect(error.reason == .untrustedRoot)
        #expect(error.detail.hasPrefix("data.signedTransactionInfo: "))
        // The forger's own verifier accepts the forged transaction on its own: only the nesting is wrong.
        #expect(try forger.verifier().verifyAndDecodeTransaction(forged).code == "valid")
    }

    @Test func forgedNestedRenewalInfoRejectsTheNotification() throws {
        let harness = try Harness()
        let forger = try Harness(prefix: "forger")
        let (transaction, _) = try harness.signNested()
        let forged = try forger.pki.signer.sign(payloadJSON: J.renewalJSON())
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
            containers: [("data", J.data(transaction: transaction, renewal: forged))]))
        let error = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
        #expect(error.reason == .untrustedRoot)
        #expect(error.detail.hasPrefix("data.signedRenewalInfo: "))
    }

    @Test func tamperedNestedSignatureRejectsTheNotification() throws {
        let harness = try Harness()
        let (transaction, renewal) = try harness.signNested()
        let otherPayload = segment(try harness.signTransaction(["productId": "\"com.example.app.lifetime\""]), 1)
        let tampered = replacingSegment(transaction, 1, with: otherPayload)
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "ONE_TIME_CHARGE", containers: [("data", J.data(transaction: tampered, renewal: renewal))]))
        let error = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
        #expect(error.reason == .invalidSignature)
        #expect(error.detail.hasPrefix("data.signedTransactionInfo: "))
    }

    @Test func nestedTransactionForAnotherBundleIsRejected() throws {
        let harness = try Harness()
        let (transaction, renewal) = try harness.signNested(transaction: ["bundleId": "\"com.example.other\""])
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "DID_RENEW", containers: [("data", J.data(transaction: transaction, renewal: renewal))]))
        // The other bundle is not configured: the nested transaction fails its own claims.
        let single = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
        #expect(single.reason == .bundleIdMismatch)
        #expect(single.detail.hasPrefix("data.signedTransactionInfo: "))
        // Both bundles configured (or none): each JWS passes alone, but they do not belong together.
        for bundleIds: Set<String> in [["com.example.app", "com.example.other"], []] {
            let error = try #require(harness.verifier(bundleIds: bundleIds).verifyAndDecodeNotification(jws).error)
            #expect(error.reason == .nestedMismatch)
            #expect(error.detail == "data.signedTransactionInfo: bundleId differs from data.bundleId")
        }
    }

    @Test func nestedPayloadsOfAnotherEnvironmentAreRejected() throws {
        let harness = try Harness()
        let production = "\"Production\""
        let (transaction, renewal) = try harness.signNested(transaction: ["environment": production])
        let mixed = try harness.sign(notificationJSON: J.notification(
            type: "DID_RENEW", containers: [("data", J.data(transaction: transaction, renewal: renewal))]))
        #expect(try harness.verifier().verifyAndDecodeNotification(mixed).code == "environment-mismatch")
        #expect(try harness.verifier(environment: .any).verifyAndDecodeNotification(mixed).code == "nested-mismatch")

        let (sandboxTransaction, productionRenewal) = try harness.signNested(renewal: ["environment": production])
        let mixedRenewal = try harness.sign(notificationJSON: J.notification(
            type: "DID_RENEW", containers: [("data", J.data(transaction: sandboxTransaction, renewal: productionRenewal))]))
        let error = try #require(harness.verifier(environment: .any).verifyAndDecodeNotification(mixedRenewal).error)
        #expect(error.reason == .nestedMismatch)
        #expect(error.detail == "data.signedRenewalInfo: environment differs from data.environment")
    }

    @Test func nestedMismatchIsAStableFinalCode() {
        #expect(VerificationReason(code: "nested-mismatch") == .nestedMismatch)
        #expect(VerificationReason.nestedMismatch.isRetryable == false)
        #expect(VerificationReason.allReasons.contains(.nestedMismatch))
    }

    @Test func nestedPayloadsOfDifferentSubscriptionsAreRejected() throws {
        let harness = try Harness()
        let (transaction, renewal) = try harness.signNested(renewal: ["originalTransactionId": "\"2000000000009999\""])
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "DID_RENEW", containers: [("data", J.data(transaction: transaction, renewal: renewal))]))
        #expect(try harness.verifier().verifyAndDecodeNotification(jws).code == "nested-mismatch")
    }

    @Test func nestedDatesAreCheckedAtTheirOwnSignedDate() throws {
        let harness = try Harness()
        // The notification is signed inside the chain's validity, its transaction claims 2027.
        let late = "1800000000000"
        let (transaction, renewal) = try harness.signNested(transaction: ["signedDate": late])
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "DID_RENEW", containers: [("data", J.data(transaction: transaction, renewal: renewal))]))
        let error = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
        #expect(error.reason == .certificateExpired)
        #expect(error.detail.hasPrefix("data.signedTransactionInfo: "))
        // A nested JWS without signedDate is checked at the clock, like a top-level one.
        let (undated, undatedRenewal) = try harness.signNested(transaction: ["signedDate": nil], renewal: ["signedDate": nil])
        let clocked = try harness.sign(notificationJSON: J.notification(
            type: "DID_RENEW", containers: [("data", J.data(transaction: undated, renewal: undatedRenewal))]))
        #expect(try harness.verifier().verifyAndDecodeNotification(clocked).code == "valid")
        #expect(try harness.verifier(clock: { Date(timeIntervalSince1970: 1_800_000_000) })
            .verifyAndDecodeNotification(clocked).code == "certificate-expired")
    }

    @Test func nestedJWSMustBeStrings() throws {
        let harness = try Harness()
        let jws = try harness.sign(notificationJSON: J.notification(type: "DID_RENEW", containers: [
            ("data", J.object([("bundleId", "\"com.example.app\""), ("environment", "\"Sandbox\""),
                               ("signedTransactionInfo", "{\"transactionId\":\"1\"}")]))]))
        #expect(try harness.verifier().verifyAndDecodeNotification(jws).code == "invalid-field")
        let notObject = try harness.sign(notificationJSON: J.notification(type: "TEST", containers: [("data", "[]")]))
        #expect(try harness.verifier().verifyAndDecodeNotification(notObject).code == "invalid-field")
        let garbage = try harness.sign(notificationJSON: J.notification(type: "DID_RENEW", containers: [
            ("data", J.data(transaction: "not-a-jws"))]))
        let error = try #require(harness.verifier().verifyAndDecodeNotification(garbage).error)
        #expect(error.reason == .malformedJWS)
        #expect(error.detail.hasPrefix("data.signedTransactionInfo: "))
    }

    @Test(arguments: ["SUBSCRIBED", "DID_RENEW", "REFUND", "REVOKE", "REFUND_REVERSED", "EXPIRED", "DID_FAIL_TO_RENEW",
                      "TEST", "CONSUMPTION_REQUEST", "METADATA_UPDATE"])
    func typesThatCarryDataNeedIt(_ type: String) throws {
        let harness = try Harness()
        let summary = J.object([("bundleId", "\"com.example.app\""), ("environment", "\"Sandbox\"")])
        for containers: [(String, String?)] in [[], [("summary", summary)], [("data", "null")]] {
            let jws = try harness.sign(notificationJSON: J.notification(type: type, containers: containers))
            let error = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
            #expect(error.reason == .missingField)
            #expect(error.detail == "field data is required for notificationType \(type)")
        }
    }

    @Test func effectsThatActOnATransactionNeedIt() throws {
        let harness = try Harness()
        let (_, renewal) = try harness.signNested()
        for type in ["REFUND", "REVOKE", "REFUND_REVERSED", "DID_RENEW", "SUBSCRIBED", "ONE_TIME_CHARGE", "RENEWAL_EXTENDED"] {
            let jws = try harness.sign(notificationJSON: J.notification(type: type, containers: [("data", J.data(renewal: renewal))]))
            let error = try #require(harness.verifier().verifyAndDecodeNotification(jws).error)
            #expect(error.reason == .missingField)
            #expect(error.detail == "field data.signedTransactionInfo is required for notificationType \(type)")
        }
        // Effects about a subscription accept the renewal info alone, but need one of the two.
        let graceOnly = try harness.sign(notificationJSON: J.notification(
            type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", containers: [("data", J.data(renewal: renewal))]))
        #expect(try harness.verifier().verifyAndDecodeNotification(graceOnly).code == "valid")
        let neither = try harness.sign(notificationJSON: J.notification(type: "EXPIRED", containers: [("data", J.data())]))
        #expect(try harness.verifier().verifyAndDecodeNotification(neither).error?.detail
                == "field data.signedTransactionInfo or data.signedRenewalInfo is required for notificationType EXPIRED")
        // Informational types need neither.
        let test = try harness.sign(notificationJSON: J.notification(type: "TEST", containers: [("data", J.data())]))
        #expect(try harness.verifier().verifyAndDecodeNotification(test).code == "valid")
    }

    @Test func unknownTypeAndSubtypeDecodeAndAreInformational() throws {
        let harness = try Harness()
        let (transaction, renewal) = try harness.signNested()
        let jws = try harness.sign(notificationJSON: J.notification(
            type: "SUBSCRIPTION_TELEPORTED", subtype: "TO_MARS",
            containers: [("data", J.data(transaction: transaction, renewal: renewal, status: "9",
                                         extra: [("consumptionRequestReason", "\"BORED\""),
                                                 ("futureMember", "{\"x\":[1,2]}")]))]))
        let notification = try harness.verifier().verifyAndDecodeNotification(jws).get()
        #expect(notification.notificationType == nil)
        #expect(notification.rawNotificationType == "SUBSCRIPTION_TELEPORTED")
        #expect(notification.subtype == nil)
        #expect(notification.rawSubtype == "TO_MARS")
        #expect(notification.data?.status == nil && notification.data?.rawStatus == 9)
        #expect(notification.data?.consumptionRequestReason == nil)
        #expect(notification.data?.transactionInfo != nil)                   // nested JWS are still verified
        #expect(NotificationEffect(notification) == .informational(notificationType: "SUBSCRIPTION_TELEPORTED", subtype: "TO_MARS"))
        // An unknown type without any container is still rejected.
        let empty = try harness.sign(notificationJSON: J.notification(type: "SUBSCRIPTION_TELEPORTED", containers: []))
        #expect(try harness.verifier().verifyAndDecodeNotification(empty).error?.detail
                == "field one of data, summary, externalPurchaseToken, appData is required")
        // Unknown subtype of a known type: the type's default row.
        let renew = try harness.signNotification(type: "DID_FAIL_TO_RENEW", subtype: "SOLAR_FLARE")
        #expect(NotificationEffect(try harness.verifier().verifyAndDecodeNotification(renew).get()) == .billingRetry)
    }

    @Test func requiredMembers() throws {
        let harness = try Harness()
        let data: (String, String?) = ("data", J.data())
        let noType = try harness.sign(notificationJSON: J.object([("notificationUUID", "\"u\""), data]))
        #expect(try harness.verifier().verifyAndDecodeNotification(noType).error?.detail == "field notificationType is required")
        let noUUID = try harness.sign(notificationJSON: J.object([("notificationType", "\"TEST\""), data]))
        #expect(try harness.verifier().verifyAndDecodeNotification(noUUID).error?.detail == "field notificationUUID is required")
        let badDate = try harness.sign(notificationJSON: J.object([("notificationType", "\"TEST\""), ("notificationUUID", "\"u\""),
                                                                    ("signedDate", "1.5e12"), data]))
        #expect(try harness.verifier().verifyAndDecodeNotification(badDate).code == "invalid-date")
    }

    @Test func productionAppAppleIdFollowsApple() throws {
        let harness = try Harness()
        let (transaction, renewal) = try harness.signNested(transaction: ["environment": "\"Production\""],
                                                            renewal: ["environment": "\"Production\""])
        func notification(appAppleId: Int64?) throws -> String {
            try harness.sign(notificationJSON: J.notification(type: "DID_RENEW", containers: [("data", J.data(
                environment: "Production", appAppleId: appAppleId, transaction: transaction, renewal: renewal))]))
        }
        let production = try harness.verifier(environment: .production, appAppleId: 1_234_567)
        #expect(production.verifyAndDecodeNotification(try notification(appAppleId: 1_234_567)).code == "valid")
        #expect(production.verifyAndDecodeNotification(try notification(appAppleId: 7)).code == "app-apple-id-mismatch")
        #expect(production.verifyAndDecodeNotification(try notification(appAppleId: nil)).code == "app-apple-id-mismatch")
        // Policy any: checked because the notification is Production.
        let any = try harness.verifier(environment: .any, appAppleId: 1_234_567)
        #expect(any.verifyAndDecodeNotification(try notification(appAppleId: 7)).code == "app-apple-id-mismatch")
        // Not configured: not checked.
        #expect(try harness.verifier(environment: .production).verifyAndDecodeNotification(
            try notification(appAppleId: 7)).code == "valid")
        // A Sandbox notification under policy any is not checked (Apple checks only for Production).
        let sandbox = try harness.signNotification(type: "DID_RENEW")
        #expect(any.verifyAndDecodeNotification(sandbox).code == "valid")
    }

    @Test func summaryExternalTokenAndAppDataCarryTheAppIdentity() throws {
        let harness = try Harness()
        let summary = J.object([("environment", "\"Sandbox\""), ("appAppleId", "41234"), ("bundleId", "\"com.example.app\""),
                                ("productId", "\"com.example.app.pro.monthly\""), ("requestIdentifier", "\"efb27071\""),
                                ("storefrontCountryCodes", "[\"CAN\",\"USA\"]"), ("succeededCount", "5"), ("failedCount", "2")])
        let extension_ = try harness.sign(notificationJSON: J.notification(
            type: "RENEWAL_EXTENSION", subtype: "SUMMARY", containers: [("summary", summary)]))
        let decoded = try harness.verifier().verifyAndDecodeNotification(extension_).get()
        #expect(decoded.summary?.storefrontCountryCodes == ["CAN", "USA"])
        #expect(decoded.summary?.succeededCount == 5 && decoded.summary?.failedCount == 2)
        #expect(decoded.bundleId == "com.example.app" && decoded.environment == .sandbox)
        #expect(try harness.verifier(bundleIds: ["com.example.other"]).verifyAndDecodeNotification(extension_).code
                == "bundle-id-mismatch")

        func token(_ id: String) throws -> String {
            try harness.sign(notificationJSON: J.notification(type: "EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED", containers: [
                ("externalPurchaseToken", J.object([("externalPurchaseId", "\"\(id)\""), ("tokenCreationDate", "1735689000000"),
                                                    ("appAppleId", "55555"), ("bundleId", "\"com.example.app\"")]))]))
        }
        let sandboxToken = try harness.verifier().verifyAndDecodeNotification(try token("SANDBOX_b2158121")).get()
        #expect(sandboxToken.externalPurchaseToken?.derivedEnvironment == .sandbox)
        #expect(sandboxToken.externalPurchaseToken?.tokenCreationDate == Date(millisecondsSince1970: 1_735_689_000_000))
        #expect(try harness.verifier().verifyAndDecodeNotification(try token("b2158121")).code == "environment-mismatch")
        #expect(try harness.verifier(environment: .production).verifyAndDecodeNotification(try token("b2158121")).code == "valid")

        let rescind = try harness.sign(notificationJSON: J.notification(type: "RESCIND_CONSENT", containers: [
            ("appData", J.object([("appAppleId", "41234"), ("bundleId", "\"com.example.app\""), ("environment", "\"Sandbox\""),
                                  ("signedAppTransactionInfo", "\"not-verified\"")]))]))
        let app = try harness.verifier().verifyAndDecodeNotification(rescind).get()
        #expect(app.appData?.signedAppTransactionInfo == "not-verified")
        #expect(NotificationEffect(app) == .informational(notificationType: "RESCIND_CONSENT", subtype: nil))
        let wrongContainer = try harness.sign(notificationJSON: J.notification(type: "RESCIND_CONSENT", containers: [("data", J.data())]))
        #expect(try harness.verifier().verifyAndDecodeNotification(wrongContainer).error?.detail
                == "field appData is required for notificationType RESCIND_CONSENT")
    }

    @Test func codableRoundTripKeepsRawAndDecodedValues() throws {
        let harness = try Harness()
        let notification = try harness.verifier().verifyAndDecodeNotification(
            try harness.signNotification(type: "REFUND", transaction: ["revocationDate": "1735689500000", "revocationReason": "1"])).get()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let copy = try decoder.decode(ResponseBodyV2DecodedPayload.self, from: encoder.encode(notification))
        #expect(copy == notification)
        #expect(copy.data?.transactionInfo?.revocationReason == .appIssue)
        let text = String(decoding: try encoder.encode(notification), as: UTF8.self)
        #expect(text.contains("\"notificationType\":\"REFUND\""))
    }
}
