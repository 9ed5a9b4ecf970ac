import AppStore
import Foundation
import Pipeline

/// One customer story about one or a few purchases (subscribe then renew, refund then reversal,
/// upgrade, transfer…): its submissions in the order Apple and the app would send them, each
/// with the verdict it must get, and where every owner it touches must end (``finals``).
struct LifecycleScript {
    /// The longest script (the generator starts one only while this many submissions are left).
    static let maxSteps = 8

    var steps: [SubmissionGenerator.Submission] = []
    var finals: [ExpectedPurchase] = []

    /// Appends a step. A step sent by someone else than the step before it (another user, or
    /// Apple naming no user) waits for that step's verdict: nothing else orders submissions with
    /// different record keys. So does every step after one that waits (it would overtake it).
    /// `waits: false` sends it regardless (a notification that arrives before the app's own
    /// submission and must wait in the retry tiers).
    mutating func add(_ step: SubmissionGenerator.Submission, waits: Bool = true) {
        var step = step
        if waits, let last = steps.last,
           last.key != step.key || last.after != nil {
            step.after = last.submissionId
        }
        steps.append(step)
    }
}

extension SubmissionGenerator {
    mutating func newTransactionId() -> String {
        nextTransaction += Int64.random(in: 1...9, using: &random)
        return String(nextTransaction)
    }

    /// A user of one script (`role` tells a script's users apart).
    func scriptUser(_ role: String) -> String { "life-\(runId)-\(scriptsStarted)-\(role)" }

    /// A transaction of `product` (an auto-renewable period when `end` is given).
    func transaction(_ product: DemoProduct, id: String, original: String? = nil, start: Date, end: Date? = nil,
                     signed: Date) -> SampleTransaction {
        SampleTransaction(transactionId: id, originalTransactionId: original ?? id, bundleId: Self.bundleId,
                          productId: product.productId, type: product.type.appleType, purchaseDate: start, expiresDate: end,
                          signedDate: signed)
    }

    /// The app's own submission of a signed transaction for `user`.
    mutating func submitted(_ transaction: SampleTransaction, by user: String, _ expectation: SubmissionExpectation) throws -> Submission {
        let submissionId = nextSubmissionId()
        return Submission(submissionId: submissionId, key: Self.bundleId + "/" + user,
                          value: record(submissionId, user, "signedTransaction", try signer.sign(payload: transaction.payload())),
                          expectation: expectation)
    }

    /// An App Store Server Notification V2 signed at `signed`, its transaction and renewal info
    /// re-signed then too, forwarded for `user` (nil: as Apple sent it, naming no user).
    mutating func notified(_ type: String, _ subtype: String?, _ transaction: SampleTransaction?,
                           renewal: SampleRenewalInfo? = nil, by user: String?, signed: Date, status: Int? = nil,
                           consumptionRequestReason: String? = nil, _ expectation: SubmissionExpectation) throws -> Submission {
        var notification = SampleNotification(notificationType: type, subtype: subtype, notificationUUID: nextUUID(),
                                              signedDate: signed, bundleId: Self.bundleId)
        if var transaction {
            transaction.signedDate = signed
            notification.signedTransactionInfo = try signer.sign(payload: transaction.payload())
        }
        if var renewal {
            renewal.signedDate = signed
            notification.signedRenewalInfo = try signer.sign(payload: renewal.payload())
        }
        notification.status = status
        notification.consumptionRequestReason = consumptionRequestReason
        let submissionId = nextSubmissionId()
        let signedPayload = try signer.sign(payload: notification.payload())
        // Keyed as the notification receiver keys what Apple sends (no user: by the payload's digest).
        let key = user.map { Self.bundleId + "/" + $0 }
            ?? AcceptedNotification.recordKey(bundleId: Self.bundleId, payloadSHA256: SHA256.hexDigest(signedPayload))
        return Submission(submissionId: submissionId, key: key, value: record(submissionId, user, "serverNotification", signedPayload),
                          expectation: expectation)
    }
}

extension SubmissionExpectation {
    static let grant = SubmissionExpectation.entitlement(action: "grant")
    static let renew = SubmissionExpectation.entitlement(action: "renew")
    static let update = SubmissionExpectation.entitlement(action: "update")
    static let expire = SubmissionExpectation.entitlement(action: "expire")
    static let revoke = SubmissionExpectation.entitlement(action: "revoke")
}

extension ExpectedPurchase {
    /// Where a purchase of `product` ends for `user` (`until`: when its access ends, if it has any).
    static func ends(_ original: String, _ user: String, _ product: DemoProduct, _ status: PurchaseStatus,
                             until: Date?) -> ExpectedPurchase {
        ExpectedPurchase(originalTransactionId: original, userId: user, entitlement: product.entitlement,
                         productType: product.type, status: status, validUntil: until)
    }
}
