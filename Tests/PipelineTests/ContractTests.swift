import Foundation
import Testing
@testable import Pipeline

@Suite struct ContractTests {
    private func json(_ value: some Encodable) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(try ContractCoding.encode(value))) as! [String: Any]
    }

    @Test func timestampsAreRFC3339WithMillisecondsOnlyWhenNeeded() {
        #expect(ContractCoding.timestamp(Fixtures.now) == "2026-11-30T06:00:00Z")
        let withMillis = ContractCoding.date(from: "2026-11-30T06:00:00.123Z")!
        #expect(ContractCoding.timestamp(withMillis) == "2026-11-30T06:00:00.123Z")
        let small = ContractCoding.date(from: "2026-11-30T06:00:00.007Z")!
        #expect(ContractCoding.timestamp(small) == "2026-11-30T06:00:00.007Z")
        #expect(RecordHeaders.timestamp(Fixtures.now) == "2026-11-30T06:00:00.000Z")
    }

    @Test func ingestedSubmissionRoundTripsWithDocumentedFields() throws {
        let message = Fixtures.ingested()
        let object = try json(message)
        #expect(Set(object.keys) == ["schema", "submissionId", "bundleId", "userId", "kind", "payload", "payloadSHA256",
                                     "submittedAt", "ingestedAt"])
        #expect(object["schema"] as? String == "receipt-ingested/v1")
        #expect(object["ingestedAt"] as? String == "2026-11-30T06:00:00Z")
        let decoded = try ContractCoding.decode(IngestedSubmission.self, from: try ContractCoding.encode(message))
        #expect(decoded == message)
    }

    @Test func verifiedTransactionWritesExplicitNulls() throws {
        let message = Fixtures.verified(Fixtures.transaction(productId: "com.demo.unlock.pro", type: .nonConsumable,
                                                             expires: nil))
        let object = try json(message)
        #expect(object["schema"] as? String == "receipt-verified/v1")
        let transaction = object["transaction"] as! [String: Any]
        #expect(transaction["expiresDate"] is NSNull)
        #expect(transaction["revocationDate"] is NSNull)
        #expect(transaction["appAccountToken"] is NSNull)
        #expect(transaction["isUpgraded"] is NSNull)
        #expect(transaction["ownershipType"] is NSNull)
        #expect(transaction["notification"] is NSNull)
        #expect(transaction["type"] as? String == "Non-Consumable")
        #expect(transaction["purchaseDate"] as? String == "2026-11-30T05:00:00Z")
        #expect(message.recordKey == "1001")
        let decoded = try ContractCoding.decode(ReceiptVerified.self, from: try ContractCoding.encode(message))
        #expect(decoded == message)
    }

    @Test func verifiedTransactionKeepsUnknownAppleTypesRaw() throws {
        var transaction = Fixtures.transaction()
        transaction.type = "Some Future Type"
        let decoded = try ContractCoding.decode(VerifiedTransaction.self, from: try ContractCoding.encode(transaction))
        #expect(decoded.type == "Some Future Type")
        #expect(decoded.productType == nil)
    }

    @Test func verifiedTransactionCarriesItsNotificationWithSignedDateAndRenewal() throws {
        var transaction = Fixtures.transaction()
        transaction.isUpgraded = true
        transaction.ownershipType = "FAMILY_SHARED"
        transaction.notification = NotificationSource(
            notificationType: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", notificationUUID: "n-1", effect: "gracePeriod",
            signedDate: Fixtures.date("2026-12-30T05:00:00.250Z"),
            renewal: RenewalSnapshot(autoRenew: true, autoRenewProductId: "com.demo.monthly.sub", expirationIntent: 2,
                                     gracePeriodExpiresDate: Fixtures.date("2027-01-15T05:00:00Z"), isInBillingRetryPeriod: true))
        let object = try json(transaction)
        #expect(object["isUpgraded"] as? Bool == true)
        #expect(object["ownershipType"] as? String == "FAMILY_SHARED")
        let notification = try #require(object["notification"] as? [String: Any])
        #expect(Set(notification.keys) == ["notificationType", "subtype", "notificationUUID", "effect", "signedDate", "renewal"])
        #expect(notification["signedDate"] as? String == "2026-12-30T05:00:00.250Z")
        let renewal = try #require(notification["renewal"] as? [String: Any])
        #expect(renewal["gracePeriodExpiresDate"] as? String == "2027-01-15T05:00:00Z")
        #expect(renewal["expirationIntent"] as? Int == 2)
        #expect(try ContractCoding.decode(VerifiedTransaction.self, from: try ContractCoding.encode(transaction)) == transaction)

        // Written before the lifecycle fields existed: they decode as absent.
        let bare = #"{"notificationType":"TEST","notificationUUID":"n-2","effect":"informational"}"#
        let decoded = try ContractCoding.decode(NotificationSource.self, from: Array(bare.utf8))
        #expect(decoded == NotificationSource(notificationType: "TEST", subtype: nil, notificationUUID: "n-2", effect: "informational"))
    }

    @Test func wrongSchemaFailsToDecode() throws {
        var object = try json(Fixtures.ingested())
        object["schema"] = "receipt-ingested/v9"
        let bytes = Array(try JSONSerialization.data(withJSONObject: object))
        #expect(throws: DecodingError.self) { try ContractCoding.decode(IngestedSubmission.self, from: bytes) }
    }

    /// A consumption request of another version is refused, not read as v1 (the expiry sweep then
    /// skips it as it skips any record it cannot read).
    @Test func aConsumptionRequestOfAnotherSchemaFailsToDecode() throws {
        let request = ConsumptionRequest(requestId: "n-1", bundleId: "com.example", userId: "u", transactionId: "1",
                                         originalTransactionId: "1", productId: "p", environment: "Production",
                                         requestedAt: Fixtures.now)
        #expect(try ContractCoding.decode(ConsumptionRequest.self, from: try ContractCoding.encode(request)) == request)
        var object = try json(request)
        object["schema"] = "consumption-request/v2"
        let bytes = Array(try JSONSerialization.data(withJSONObject: object))
        #expect(throws: DecodingError.self) { try ContractCoding.decode(ConsumptionRequest.self, from: bytes) }
    }

    @Test func rejectionKeepsUTF8OriginalAndBoundsIt() throws {
        let original = Array("héllo wörld".utf8)
        let full = ReceiptRejected(stage: .ingest, reason: .invalidJSON, detail: "d", subject: .unknown,
                                   rejectedAt: Fixtures.now, originalValue: original)
        #expect(full.original == "héllo wörld")
        #expect(full.originalEncoding == .utf8)
        #expect(!full.originalTruncated)
        // Cutting at byte 2 would split "é": the cut steps back to a character boundary.
        let cut = ReceiptRejected(stage: .ingest, reason: .invalidJSON, detail: "d", subject: .unknown,
                                  rejectedAt: Fixtures.now, originalValue: original, maxOriginalBytes: 2)
        #expect(cut.original == "h")
        #expect(cut.originalTruncated)
        let object = try json(full)
        #expect(object["schema"] as? String == "receipt-rejected/v1")
        #expect(object["submissionId"] is NSNull)
    }

    @Test func rejectionUsesBase64ForBinaryOriginals() {
        let binary: [UInt8] = [0xFF, 0x00, 0xFE, 0x01]
        let rejection = ReceiptRejected(stage: .ingest, reason: .invalidUTF8, detail: "d", subject: .unknown,
                                        rejectedAt: Fixtures.now, originalValue: binary)
        #expect(rejection.originalEncoding == .base64)
        #expect(Data(base64Encoded: rejection.original).map(Array.init) == binary)
    }

    @Test func outcomeContract() throws {
        let outcome = ReceiptOutcome(submissionId: "s", stage: .fulfil, outcome: .duplicateSuppressed,
                                     transactionId: "1001", at: Fixtures.now)
        let object = try json(outcome)
        #expect(object["schema"] as? String == "receipt-outcome/v1")
        #expect(object["outcome"] as? String == "duplicate-suppressed")
        #expect(object["at"] as? String == "2026-11-30T06:00:00Z")
    }

    @Test func ownerKeyIsUnambiguous() {
        let key = OwnerKey(bundleId: "com.a.b", userId: "x/y/z")
        #expect(key.encoded == "com.a.b/x/y/z")
        #expect(OwnerKey(encoded: key.encoded) == key)
        #expect(OwnerKey(encoded: "no-slash") == nil)
    }

    @Test func topicDefaultsAndRetryTiers() throws {
        let topics = Topics()
        #expect(topics.submitted == "receipts.submitted")
        #expect(topics.ingested == "receipts.ingested")
        #expect(topics.verified == "receipts.verified")
        #expect(topics.entitlementsChanged == "entitlements.changed")
        #expect(topics.ownerUpdates == "entitlements.owner-updates")
        #expect(topics.entitlementState == "entitlements.state")
        #expect(topics.input(of: .owners) == "entitlements.owner-updates")
        #expect(topics.output(.ownerUpdates) == "entitlements.owner-updates")
        #expect(topics.output(.entitlementState) == "entitlements.state")
        #expect(topics.rejected == "receipts.rejected")
        #expect(topics.outcomes == "receipts.outcomes")
        #expect(topics.deadLetter == "receipts.dead-letter")
        #expect(topics.retry(of: .verify, tier: 1) == "receipts.ingested.retry.1")
        #expect(topics.retry(of: .fulfil, tier: 3) == "receipts.verified.retry.3")
        #expect(topics.retry(of: .owners, tier: 1) == "entitlements.owner-updates.retry.1")
        #expect(topics.allNames(retryTiers: 0) == ["receipts.submitted", "receipts.ingested", "receipts.verified",
                                                   "entitlements.changed", "entitlements.owner-updates", "entitlements.state",
                                                   "receipts.rejected", "receipts.outcomes", "receipts.dead-letter",
                                                   "consumption.requests", "consumption.answers", "consumption.outcomes"])
        #expect(topics.allNames(retryTiers: 2).count == 12 + 2 * StageName.allCases.count)
        #expect(topics.retry(of: .consumption, tier: 1) == "consumption.answers.retry.1")
        try topics.validate()
    }

    @Test func topicsDecodePartiallyAndValidate() throws {
        let topics = try ContractCoding.decode(Topics.self, from: Array(#"{"rejected":"x.rejected"}"#.utf8))
        #expect(topics.rejected == "x.rejected")
        #expect(topics.submitted == "receipts.submitted")
        #expect(throws: PipelineConfigurationError.self) { try Topics(rejected: "bad topic!").validate() }
        #expect(throws: PipelineConfigurationError.self) { try Topics(outcomes: "receipts.rejected").validate() }
        #expect(throws: PipelineConfigurationError.self) { try Topics(ownerUpdates: "owner updates").validate() }
        #expect(throws: PipelineConfigurationError.self) { try Topics(entitlementState: "entitlements.changed").validate() }
        let renamed = try ContractCoding.decode(Topics.self, from: Array(#"{"ownerUpdates":"o.u","entitlementState":"o.s"}"#.utf8))
        #expect(renamed.ownerUpdates == "o.u" && renamed.entitlementState == "o.s" && renamed.input(of: .owners) == "o.u")
    }

    @Test func attemptHeaderParsing() {
        #expect(RecordHeaders.attempt(in: []) == 1)
        #expect(RecordHeaders.attempt(in: [RecordHeader(key: RecordHeaders.attempt, text: "3")]) == 3)
        #expect(RecordHeaders.attempt(in: [RecordHeader(key: RecordHeaders.attempt, text: "zero")]) == 1)
    }
}
