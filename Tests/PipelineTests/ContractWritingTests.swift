import AppStore
import Foundation
import Testing
@testable import Pipeline

/// The direct writers (``ContractWritable``) must write exactly the bytes the Codable path
/// (``ContractJSONEncoder``) writes, for every conforming contract: fully populated values (what
/// catches a member a writer misses), values with every optional nil, awkward strings, dates,
/// integers, arrays and every enumeration case.
@Suite struct ContractWritingTests {
    /// Both paths, compared as text so a failure shows the difference; also checks that
    /// ``ContractCoding/encode(_:)`` takes the direct path.
    static func expectIdentity<T: Encodable & ContractWritable>(_ value: T, _ comment: Comment? = nil,
                                                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let direct = String(decoding: value.contractJSON(), as: UTF8.self)
        let codable = String(decoding: try ContractJSONEncoder.encode(value), as: UTF8.self)
        #expect(direct == codable, comment, sourceLocation: sourceLocation)
        #expect(try ContractCoding.encode(value) == value.contractJSON(), comment, sourceLocation: sourceLocation)
    }

    static let texts = [
        "plain", "", #"quote " and backslash \ and slash /"#, "tab \t newline \n return \r",
        "\u{00}\u{01}\u{08}\u{0b}\u{0c}\u{1f}\u{7f}", "ünïcødé ✓ 漢字", "emoji 🎮👨‍👩‍👧 flag 🇫🇷", "\u{2028}\u{2029}",
    ]

    static let dates = [
        "2026-11-30T06:00:00Z", "2026-11-30T06:00:00.123Z", "2024-02-29T23:59:59.001Z", "1969-12-31T23:59:59.5Z",
        "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z",
    ].map { ContractCoding.date(from: $0)! }

    static let integers = [0, 1, -1, 42, -1_000_000_007, Int.max, Int.min, 9_999_999_999]

    /// Every combination of text and date, with integers and flags cycling through theirs.
    static let fixtures: [Fixture] = texts.enumerated().flatMap { textIndex, text in
        dates.enumerated().map { dateIndex, date in
            let index = textIndex * dates.count + dateIndex
            return Fixture(text: text, date: date, integer: integers[index % integers.count], flag: index % 2 == 0)
        }
    }

    @Test(arguments: fixtures)
    func fullyPopulatedContractsWriteAsCodableDoes(_ fixture: Fixture) throws {
        let populated: [any Encodable & ContractWritable] = fixture.everyContract(populated: true)
        for value in populated {
            // Guards the fixture itself: a fully populated value has no null member, so an optional
            // added to a contract but not to the fixture fails here.
            let json = String(decoding: try ContractJSONEncoder.encode(value), as: UTF8.self)
            #expect(!json.contains(":null"), "\(type(of: value)) has an unset member: \(json)")
            try Self.expectIdentity(value, "\(type(of: value))")
        }
    }

    @Test(arguments: fixtures)
    func contractsWithEveryOptionalNilWriteAsCodableDoes(_ fixture: Fixture) throws {
        for value in fixture.everyContract(populated: false) { try Self.expectIdentity(value, "\(type(of: value))") }
    }

    @Test func everyEnumerationCaseWritesAsCodableDoes() throws {
        let fixture = Self.fixtures[1]
        for kind in SubmissionKind.allCases {
            var ingested = fixture.ingested()
            ingested.kind = kind
            try Self.expectIdentity(ingested)
            var verified = fixture.verified(populated: true)
            verified.kind = kind
            try Self.expectIdentity(verified)
        }
        for productType in ProductType.allCases {
            for status in PurchaseStatus.allCases {
                var purchase = fixture.purchase(populated: true)
                purchase.productType = productType
                purchase.status = status
                try Self.expectIdentity(purchase)
                var owned = fixture.ownerPurchase(populated: true)
                owned.productType = productType
                owned.status = status
                try Self.expectIdentity(owned)
            }
        }
        for change in EntitlementChangeKind.allCases {
            for action in EntitlementAction.allCases {
                var event = fixture.changed(populated: true)
                event.change = change
                event.action = action
                try Self.expectIdentity(event)
                try Self.expectIdentity(FulfilOutput.event(event))
            }
        }
        for stage in StageName.allCases {
            for encoding in [ReceiptRejected.OriginalEncoding.utf8, .base64] {
                var rejected = fixture.rejected(populated: true)
                rejected.stage = stage
                rejected.originalEncoding = encoding
                try Self.expectIdentity(rejected)
            }
            for outcome in [OutcomeCode.duplicateSuppressed, .staleSuppressed, .notificationInformational, .noTransactions] {
                var value = fixture.outcome(populated: true)
                value.stage = stage
                value.outcome = outcome
                try Self.expectIdentity(value)
            }
        }
    }

    @Test(arguments: [0, 1, 3])
    func arraysOfEveryLengthWriteAsCodableDoes(_ count: Int) throws {
        let fixture = Self.fixtures[3]
        var state = fixture.state(populated: true)
        state.purchases = (0..<count).map { index in
            var purchase = fixture.ownerPurchase(populated: index % 2 == 0)
            purchase.originalTransactionId += "-\(index)"
            return purchase
        }
        try Self.expectIdentity(state)
        var purchase = fixture.purchase(populated: true)
        purchase.refundedTransactionIds = (0..<count).map { "refund-\($0) \(fixture.text)" }
        try Self.expectIdentity(purchase)
        try Self.expectIdentity(FulfilOutput.event(fixture.changed(populated: true, purchase: purchase)))
    }

    @Test func everyContractSampleWritesAsCodableDoes() async throws {
        let samples = try await ContractSamples.make()
        var count = 0
        func check<T: Encodable & ContractWritable>(_ values: [T]) throws {
            for value in values { try Self.expectIdentity(value); count += 1 }
        }
        try check(samples.ingested)
        try check(samples.verified)
        try check(samples.rejected)
        try check(samples.outcomes)
        try check(samples.changes)
        try check(samples.ownerUpdates)
        try check(samples.states)
        try check(samples.consumptionRequests)
        try check(samples.changes.map(FulfilOutput.event) + samples.ownerUpdates.map(FulfilOutput.ownerUpdate)
            + samples.consumptionRequests.map(FulfilOutput.consumptionRequest))
        #expect(count > 100)
    }

    @Test func aTypeWithoutAWriterStillEncodesThroughCodable() throws {
        struct Plain: Encodable { var b = 1, a = "x" }
        #expect(try ContractCoding.encode(Plain()) == Array(#"{"a":"x","b":1}"#.utf8))
    }
}

/// One set of field values, from which every conforming contract is built fully populated or
/// with every optional nil.
struct Fixture: Sendable, CustomTestStringConvertible {
    var text: String
    var date: Date
    var integer: Int
    var flag: Bool

    var testDescription: String { "\(text.debugDescription) \(ContractCoding.timestamp(date)) \(integer)" }

    func everyContract(populated: Bool) -> [any Encodable & ContractWritable] {
        let event = changed(populated: populated)
        let update = ownerUpdate(populated: populated)
        let request = consumptionRequest()
        return [ingested(), verified(populated: populated), transaction(populated: populated),
                notification(populated: populated), renewal(populated: populated), event, purchase(populated: populated),
                update, ownerPurchase(populated: populated), request, state(populated: populated),
                rejected(populated: populated), outcome(populated: populated),
                FulfilOutput.event(event), FulfilOutput.ownerUpdate(update), FulfilOutput.consumptionRequest(request)]
    }

    func ingested() -> IngestedSubmission {
        IngestedSubmission(submissionId: text, bundleId: "b" + text, userId: text + "u", kind: .serverNotification,
                           payload: text + text, submittedAt: date, ingestedAt: date.addingTimeInterval(0.25))
    }

    func verified(populated: Bool) -> ReceiptVerified {
        ReceiptVerified(submissionId: text, bundleId: text, userId: "u", kind: .signedTransaction,
                        verifiedAt: date, transaction: transaction(populated: populated))
    }

    func renewal(populated: Bool) -> RenewalSnapshot {
        populated ? RenewalSnapshot(autoRenew: flag, autoRenewProductId: text, expirationIntent: integer,
                                    gracePeriodExpiresDate: date, isInBillingRetryPeriod: !flag)
            : RenewalSnapshot()
    }

    func notification(populated: Bool) -> NotificationSource {
        NotificationSource(notificationType: "DID_RENEW " + text, subtype: populated ? text : nil,
                           notificationUUID: text + "-uuid", effect: "transactionUpdate",
                           signedDate: populated ? date : nil, renewal: populated ? renewal(populated: true) : nil)
    }

    func transaction(populated: Bool) -> VerifiedTransaction {
        VerifiedTransaction(transactionId: text + "1", originalTransactionId: text, bundleId: text, productId: "p" + text,
                            type: "Auto-Renewable Subscription", quantity: integer,
                            purchaseDate: populated ? date : nil, expiresDate: populated ? date.addingTimeInterval(86_400) : nil,
                            revocationDate: populated ? date : nil, revocationReason: populated ? integer : nil,
                            environment: text, signedDate: populated ? date : nil, appAccountToken: populated ? text : nil,
                            isUpgraded: populated ? flag : nil, ownershipType: populated ? "FAMILY_SHARED" : nil,
                            notification: populated ? notification(populated: true) : nil)
    }

    func purchase(populated: Bool) -> PurchaseState {
        let optionalDate = populated ? date : nil
        let optionalText = populated ? text : nil
        return PurchaseState(originalTransactionId: text, bundleId: "b", userId: text, entitlement: "e" + text,
                             productId: text, productType: .autoRenewable, status: .gracePeriod, hasAccess: flag,
                             validUntil: optionalDate, latestTransactionId: text + "9", periodStart: optionalDate,
                             expiresDate: optionalDate, durationMonths: populated ? integer : nil,
                             quantity: populated ? integer : nil, gracePeriodExpiresDate: optionalDate,
                             autoRenew: populated ? flag : nil, pendingProductId: optionalText,
                             expirationReason: optionalText, revocationDate: optionalDate,
                             revocationReason: populated ? integer : nil, ownershipType: text, environment: text,
                             accessWithheld: optionalText, signedDate: optionalDate, renewalSignedDate: optionalDate,
                             refundedTransactionIds: populated ? [text, "2"] : [], version: integer,
                             ownerSince: optionalDate)
    }

    func changed(populated: Bool, purchase given: PurchaseState? = nil) -> EntitlementChanged {
        let purchase = given ?? purchase(populated: populated)
        let change = LifecycleChange(kind: .renewal, owner: OwnerKey(bundleId: text, userId: text), entitlement: text,
                                     productId: text, status: .expired, hasAccess: flag,
                                     validUntil: populated ? date : nil, quantity: populated ? integer : nil)
        var event = EntitlementChanged(change: change, index: 0, purchase: purchase,
                                       transaction: transaction(populated: populated), submissionId: text,
                                       effectiveAt: date)
        event.eventId = text + "-event"
        event.expirationReason = populated ? text : nil
        event.revocationReason = populated ? integer : nil
        event.autoRenew = populated ? flag : nil
        event.pendingProductId = populated ? text : nil
        return event
    }

    func ownerPurchase(populated: Bool) -> OwnerPurchase {
        OwnerPurchase(originalTransactionId: text, productId: text, productType: .nonRenewing, status: .active,
                      hasAccess: flag, validUntil: populated ? date : nil, periodStart: populated ? date : nil,
                      durationMonths: populated ? integer : nil, quantity: populated ? integer : nil,
                      ownershipType: text, environment: text, changedAt: populated ? date : nil, version: integer)
    }

    func ownerUpdate(populated: Bool) -> OwnerPurchaseUpdate {
        OwnerPurchaseUpdate(owner: OwnerKey(bundleId: text, userId: text + "u"), entitlement: text,
                            purchase: ownerPurchase(populated: populated))
    }

    func consumptionRequest() -> ConsumptionRequest {
        ConsumptionRequest(requestId: text, bundleId: text, userId: text, transactionId: text + "1",
                           originalTransactionId: text, productId: text, environment: text, requestedAt: date)
    }

    /// The fields set directly: the initialiser folds (and recomputes) them from the purchases.
    func state(populated: Bool) -> EntitlementState {
        var state = EntitlementState(key: OwnerEntitlementKey(owner: OwnerKey(bundleId: text, userId: text), entitlement: text),
                                     purchases: [])
        state.hasAccess = flag
        state.validUntil = populated ? date : nil
        state.asOf = populated ? date : nil
        state.units = populated ? integer : nil
        state.purchases = populated ? [ownerPurchase(populated: true), ownerPurchase(populated: true)] : []
        return state
    }

    func rejected(populated: Bool) -> ReceiptRejected {
        let subject = populated
            ? SubmissionSubject(submissionId: text, bundleId: text, userId: text, kind: text, payloadSHA256: text,
                                transactionId: text)
            : SubmissionSubject.unknown
        return ReceiptRejected(stage: .verify, reason: ReasonCode(text), detail: text, subject: subject, rejectedAt: date,
                               originalValue: Array((text + "{}").utf8), maxOriginalBytes: flag ? 4 : 1024)
    }

    func outcome(populated: Bool) -> ReceiptOutcome {
        ReceiptOutcome(submissionId: populated ? text : nil, stage: .fulfil, outcome: OutcomeCode(text),
                       transactionId: populated ? text : nil, at: date)
    }
}
