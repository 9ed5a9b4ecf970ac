import Foundation
import Testing
@testable import Pipeline

/// The receiver's shape check: every rule has its own reason code, and what it accepts is a
/// submission ingest accepts, keyed and identified by the payload alone.
@Suite struct NotificationIntakeTests {
    static func signedPayload(_ claims: String, header: String = #"{"alg":"ES256","x5c":["MIIB"]}"#) -> String {
        Fixtures.base64URL(header) + "." + Fixtures.base64URL(claims) + "." + Fixtures.base64URL(String(repeating: "s", count: 64))
    }

    static let notification = signedPayload(#"{"notificationType":"DID_RENEW","notificationUUID":"9f1c-0001","data":{"bundleId":"com.example.game","environment":"Sandbox"}}"#)

    static func body(_ signedPayload: String) -> [UInt8] { Array(#"{"signedPayload":"\#(signedPayload)"}"#.utf8) }

    private func refusal(_ body: [UInt8], intake: NotificationIntake = NotificationIntake()) -> NotificationIntakeError.Code? {
        if case .failure(let error) = intake.accept(body, receivedAt: Fixtures.now) { return error.code }
        return nil
    }

    @Test func acceptedNotificationBecomesAUserlessSubmissionIngestAccepts() throws {
        let accepted = try NotificationIntake().accept(Self.body(Self.notification), receivedAt: Fixtures.now).get()
        let digest = SHA256.hexDigest(Self.notification)
        #expect(accepted.key == "com.example.game/" + digest)
        #expect(accepted.submissionId == "apple-notification:" + digest)
        #expect(accepted.bundleId == "com.example.game")
        #expect(accepted.notificationUUID == "9f1c-0001")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(accepted.value)) as? [String: Any])
        #expect(object["userId"] == nil)
        #expect(object["kind"] as? String == "serverNotification")
        #expect(object["payload"] as? String == Self.notification)

        let ingested = try IngestStage().ingest(accepted.value, now: Fixtures.now).get()
        #expect(ingested.userId == "")
        #expect(ingested.kind == .serverNotification)
        #expect(ingested.recordKey == accepted.key)
        #expect(ingested.submissionId == accepted.submissionId)
    }

    @Test func appleRetryOfTheSameBodyIsTheSameRecord() throws {
        let intake = NotificationIntake()
        let first = try intake.accept(Self.body(Self.notification), receivedAt: Fixtures.now).get()
        let retry = try intake.accept(Self.body(Self.notification), receivedAt: Fixtures.now.addingTimeInterval(3600)).get()
        #expect(first.key == retry.key)
        #expect(first.submissionId == retry.submissionId)
        let other = try intake.accept(Self.body(Self.signedPayload(#"{"notificationUUID":"9f1c-0002","data":{"bundleId":"com.example.game"}}"#)),
                                      receivedAt: Fixtures.now).get()
        #expect(other.submissionId != first.submissionId)
    }

    @Test func summaryNotificationsNameTheirBundleInSummary() throws {
        let payload = Self.signedPayload(#"{"notificationType":"RENEWAL_EXTENSION","summary":{"bundleId":"com.example.game"}}"#)
        #expect(try NotificationIntake().accept(Self.body(payload), receivedAt: Fixtures.now).get().bundleId == "com.example.game")
    }

    @Test func eachBrokenShapeHasItsReason() {
        #expect(refusal(Array("not json".utf8)) == .invalidJSON)
        #expect(refusal([0xFF, 0xFE]) == .invalidJSON)
        #expect(refusal(Array(#"["signedPayload"]"#.utf8)) == .invalidJSON)
        #expect(refusal(Array(#"{"payload":"x"}"#.utf8)) == .missingSignedPayload)
        #expect(refusal(Array(#"{"signedPayload":42}"#.utf8)) == .missingSignedPayload)
        #expect(refusal(Array(#"{"signedPayload":""}"#.utf8)) == .missingSignedPayload)
        #expect(refusal(Array(#"{"signedPayload":"   "}"#.utf8)) == .missingSignedPayload)
        #expect(refusal(Self.body("a.b")) == .malformedJWS)
        #expect(refusal(Self.body("a!.b.c")) == .malformedJWS)
        #expect(refusal(Self.body(Self.signedPayload("[1,2]"))) == .malformedJWS)
        #expect(refusal(Self.body(Self.signedPayload(#"{"data":{}}"#))) == .missingBundleId)
        #expect(refusal(Self.body(Self.signedPayload(#"{"data":{"bundleId":7}}"#))) == .missingBundleId)
        #expect(refusal(Self.body(Self.signedPayload(#"{"data":{"bundleId":"com/evil"}}"#))) == .invalidBundleId)
        #expect(refusal(Self.body(Self.notification), intake: NotificationIntake(bundleIds: ["com.other.app"])) == .invalidBundleId)
        #expect(refusal(Self.body(Self.notification), intake: NotificationIntake(bundleIds: ["com.example.game"])) == nil)
    }

    @Test func refusalsNeverQuoteThePayload() {
        let secret = Self.signedPayload(#"{"data":{"bundleId":"com/evil"}}"#)
        guard case .failure(let error) = NotificationIntake().accept(Self.body(secret), receivedAt: Fixtures.now) else {
            Issue.record("accepted a bad bundle id")
            return
        }
        #expect(!error.detail.contains(secret))
    }
}
