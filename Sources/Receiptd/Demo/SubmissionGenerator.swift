import AppStore
import FakeAppStore
import Foundation
import Pipeline

/// Produces a reproducible stream of `receipt-submitted/v1` records shaped like real traffic:
/// genuine signed transactions for the demo catalogue (first purchases, first sightings of
/// renewals, refunds and expired subscriptions, consumables), re-submissions, forgeries
/// (untrusted chain, tampered payload, foreign bundle id), malformed records, kinds the verifier
/// does not handle, and lifecycle scripts: one purchase followed through renewals, billing
/// trouble, refunds, upgrades, transfers and Apple's notifications (``LifecycleScripts``).
///
/// Each record says what the pipeline must conclude from it, and ``owners`` says where every
/// owner must end up, so the demo checks outcomes instead of merely counting.
struct SubmissionGenerator {
    struct Submission: Sendable {
        var submissionId: String
        /// The record key: the owner key `bundleId/userId`, as the contract recommends, so one
        /// owner's submissions stay in order.
        var key: String
        var value: [UInt8]
        var expectation: SubmissionExpectation
        /// A submission that must not be published before this one has a verdict: a step of a
        /// script sent by someone else than the step before it (another user, Apple), whose order
        /// nothing else would keep.
        var after: String?

        /// The submission's `kind` (or `malformed`), for the demo's summary.
        var kind: String {
            let object = (try? JSONSerialization.jsonObject(with: Data(value))) as? [String: Any]
            return (object?["kind"] as? String).map { ["signedTransaction", "serverNotification", "signedRenewalInfo", "appReceipt",
                                                        "transactionId"].contains($0) ? $0 : "malformed" } ?? "malformed"
        }
    }

    static let bundleId = "com.demo.game"

    let signer: JWSSigner
    let forger: JWSSigner
    let appStore: FakeTransactionStore?
    var random: SeededRandom
    /// The instant independent transactions are signed at (whole seconds, so every date is exact in milliseconds).
    let now: Date
    var nextTransaction: Int64 = 2_000_000_100_000_000
    var issued: [(jws: String, userId: String)] = []
    var counter = 0
    let runId: String
    /// Where every owner the stream touches must end up.
    var owners = ExpectedOwnerStates()
    /// Steps of started scripts not handed out yet, per script, in order.
    var queued: [[Submission]] = []
    var scriptsStarted = 0
    /// How many submissions ``next()`` will be asked for: scripts start only while they fit.
    private let limit: Int
    private var handedOut = 0

    /// - Parameters:
    ///   - signer: signs with the PKI the verifier trusts for the run.
    ///   - forger: signs with a look-alike PKI the verifier does not trust.
    ///   - seed: makes the stream reproducible.
    ///   - now: the instant transactions are signed at.
    ///   - appStore: the fake App Store's purchases, for `transactionId` and `appReceipt` submissions
    ///     (without one those kinds are expected to be answered `unsupported-kind`).
    ///   - limit: how many times ``next()`` will be called (every started script is handed out whole).
    init(signer: JWSSigner, forger: JWSSigner, seed: UInt64, now: Date = Date(), appStore: FakeTransactionStore? = nil,
         limit: Int = .max) {
        self.signer = signer
        self.forger = forger
        self.appStore = appStore
        self.random = SeededRandom(seed: seed)
        self.now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        self.runId = String(seed, radix: 36)
        self.limit = limit
    }

    /// The next submission: a queued script step, a new script's first step, or an independent one.
    mutating func next() throws -> Submission {
        handedOut += 1
        let queuedSteps = queued.reduce(0) { $0 + $1.count }
        if !queued.isEmpty, handedOut + queuedSteps > limit || Bool.random(using: &random) {
            return popQueued()
        }
        if limit - handedOut - queuedSteps >= LifecycleScript.maxSteps, Int.random(in: 0..<100, using: &random) < 12 {
            let script = try nextScript()
            for purchase in script.finals { owners.expect(purchase) }
            queued.append(script.steps)
            return popQueued()
        }
        return try nextIndependent()
    }

    private mutating func popQueued() -> Submission {
        let index = Int.random(in: 0..<queued.count, using: &random)
        let step = queued[index].removeFirst()
        if queued[index].isEmpty { queued.remove(at: index) }
        return step
    }

    /// One submission on its own: genuine, re-submitted, forged, malformed or of another kind.
    private mutating func nextIndependent() throws -> Submission {
        let submissionId = nextSubmissionId()
        let userId = "player-\(Int.random(in: 1...max(50, counter / 3), using: &random))"
        func submission(_ kind: String, _ payload: String, _ expectation: SubmissionExpectation, user: String = userId) -> Submission {
            Submission(submissionId: submissionId, key: Self.bundleId + "/" + user, value: record(submissionId, user, kind, payload),
                       expectation: expectation)
        }
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 55..<62:
            // An App Store Server Notification V2 carrying the signed transaction (one in seven
            // with a forged nested transaction, which must sink the whole notification).
            let (transaction, action) = genuineTransaction()
            let forgedNested = roll == 61
            let nested = try (forgedNested ? forger : signer).sign(payload: transaction.payload())
            let notification = try signer.sign(payload: notificationPayload(for: transaction, nested: nested))
            if !forgedNested { expectIndependent(transaction, userId: userId) }
            return submission("serverNotification", notification,
                              forgedNested ? .rejected(reason: "untrusted-root") : .entitlement(action: action))
        case 0..<55:
            let (transaction, action) = genuineTransaction()
            let jws = try signer.sign(payload: transaction.payload())
            issued.append((jws, userId))
            expectIndependent(transaction, userId: userId)
            return submission("signedTransaction", jws, .entitlement(action: action))
        case 62..<74 where !issued.isEmpty:
            // The same signed transaction submitted again (client retry, restored purchase).
            let earlier = issued[Int.random(in: 0..<issued.count, using: &random)]
            return submission("signedTransaction", earlier.jws, .duplicate, user: earlier.userId)
        case 74..<80:
            let jws = try forger.sign(payload: genuineTransaction().0.payload())
            return submission("signedTransaction", jws, .rejected(reason: "untrusted-root"))
        case 80..<84:
            let jws = Self.tamper(try signer.sign(payload: genuineTransaction().0.payload()))
            return submission("signedTransaction", jws, .rejected(reason: "invalid-signature"))
        case 84..<87:
            var (transaction, _) = genuineTransaction()
            transaction.bundleId = "com.other.app"
            return submission("signedTransaction", try signer.sign(payload: transaction.payload()),
                              .rejected(reason: "bundle-id-mismatch"))
        case 87..<94:
            let (value, reason) = malformed(submissionId, userId)
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId, value: value,
                              expectation: .rejected(reason: reason))
        default:
            guard let appStore else {
                let kinds: [(String, String)] = [("transactionId", String(nextTransaction + 17)),
                                                 ("appReceipt", "MIIT" + String(repeating: "QUJD", count: 40))]
                let (kind, payload) = kinds[Int.random(in: 0..<kinds.count, using: &random)]
                return submission(kind, payload, .rejected(reason: "unsupported-kind"))
            }
            // A purchase Apple knows about, submitted as a bare transaction id (verified through the
            // App Store Server API) or as a StoreKit 1 receipt (verified through verifyReceipt).
            let purchase = appStore.purchase(productId: "com.demo.coins.100", type: .consumable,
                                             environment: Bool.random(using: &random) ? .production : .sandbox,
                                             purchaseDate: now.addingTimeInterval(-60))
            owners.expect(ExpectedPurchase(originalTransactionId: purchase.originalTransactionId, userId: userId, entitlement: "coins",
                                           productType: .consumable, status: .active, units: purchase.quantity * 100))
            if Bool.random(using: &random) {
                return submission("transactionId", purchase.transactionId, .entitlement(action: "grant"))
            }
            let receipt = appStore.makeReceipt(customerId: purchase.customerId, environment: purchase.environment)
            return submission("appReceipt", receipt, .entitlement(action: "grant"))
        }
    }

    /// The next submission, always a genuine, first-time signed transaction (benchmarks, warm-up).
    mutating func nextGenuine() throws -> Submission {
        let submissionId = nextSubmissionId()
        let userId = "player-\(counter)"
        let (transaction, action) = genuineTransaction()
        expectIndependent(transaction, userId: userId)
        return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId,
                          value: record(submissionId, userId, "signedTransaction", try signer.sign(payload: transaction.payload())),
                          expectation: .entitlement(action: action))
    }

    mutating func nextSubmissionId() -> String {
        counter += 1
        return "demo-\(runId)-\(counter)"
    }

    /// A `receipt-submitted/v1` record; without `userId` (Apple's notifications name no user).
    func record(_ submissionId: String, _ userId: String?, _ kind: String, _ payload: String) -> [UInt8] {
        var json = JSONText()
        json.add("schema", "receipt-submitted/v1")
        json.add("submissionId", submissionId)
        if let userId { json.add("userId", userId) }
        json.add("bundleId", Self.bundleId)
        json.add("kind", kind)
        json.add("payload", payload)
        json.add("submittedAt", "2026-11-30T06:00:00Z")
        return json.bytes
    }

    /// A record ingest must reject, with the reason it must give.
    private mutating func malformed(_ submissionId: String, _ userId: String) -> ([UInt8], String) {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return (Array("{\"schema\":\"receipt-submitted/v1\",".utf8), "invalid-json")
        case 1: return (Array("not json at all".utf8), "invalid-json")
        case 2:
            return (Array(#"{"schema":"receipt-submitted/v1","submissionId":"\#(submissionId)","bundleId":"\#(Self.bundleId)","kind":"signedTransaction","payload":"a.b.c"}"#.utf8),
                    "missing-field")
        case 3: return (record(submissionId, userId, "signedTransaction", "not-a-jws"), "malformed-payload")
        default: return (record(submissionId, userId, "playStoreToken", "abc"), "unsupported-kind")
        }
    }

    /// Flips one character in the middle of the payload segment so the signature no longer matches.
    static func tamper(_ jws: String) -> String {
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var payload = Array(parts[1])
        let i = payload.count / 2
        payload[i] = payload[i] == "A" ? "B" : "A"
        parts[1] = String(payload)
        return parts.joined(separator: ".")
    }
}
