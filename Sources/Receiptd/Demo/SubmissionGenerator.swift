import AppStore
import FakeAppStore
import Foundation

/// Produces a reproducible stream of `receipt-submitted/v1` records shaped like real traffic:
/// genuine signed transactions for the demo catalogue (first purchases, renewals, refunds,
/// expired subscriptions, consumables), re-submissions of the same transaction, forgeries
/// (untrusted chain, tampered payload, foreign bundle id), malformed records, and kinds the
/// verifier does not handle yet. Each record says what the pipeline must conclude from it, so
/// the demo can check the outcome instead of merely counting.
struct SubmissionGenerator {
    /// What a correct pipeline does with a submission.
    enum Expectation: Sendable, Equatable {
        /// One entitlement change with this action.
        case entitlement(action: String)
        /// A rejection with this reason code.
        case rejected(reason: String)
        /// A duplicate of an earlier transaction: suppressed by fulfil.
        case duplicate

        /// The verdict the tally records for a submission that met this expectation.
        var verdict: String {
            switch self {
            case .entitlement(let action): action
            case .rejected(let reason): "rejected:" + reason
            case .duplicate: "duplicate-suppressed"
            }
        }

        /// Whether `verdict` is right for this expectation. With `anyOrder`, a genuine submission
        /// may end as its transaction's change or as the suppressed duplicate: under chaos a
        /// replayed dead letter can reach fulfil after a later copy of the same transaction, and
        /// which copy grants is then a matter of order, not of correctness (the double-grant
        /// check guards the count). A rejection must always carry exactly the expected reason.
        func accepts(_ verdict: String, anyOrder: Bool) -> Bool {
            if verdict == self.verdict { return true }
            guard anyOrder else { return false }
            switch self {
            case .entitlement, .duplicate:
                return verdict == "duplicate-suppressed" || !(verdict.hasPrefix("rejected:") || verdict.hasPrefix("dead-letter:"))
            case .rejected:
                return false
            }
        }
    }

    struct Submission: Sendable {
        var submissionId: String
        /// The record key: the owner key `bundleId/userId`, as the contract recommends, so one
        /// owner's submissions stay in order.
        var key: String
        var value: [UInt8]
        var expectation: Expectation

        /// The submission's `kind` (or `malformed`), for the demo's summary.
        var kind: String {
            let object = (try? JSONSerialization.jsonObject(with: Data(value))) as? [String: Any]
            return (object?["kind"] as? String).map { ["signedTransaction", "serverNotification", "signedRenewalInfo", "appReceipt",
                                                        "transactionId"].contains($0) ? $0 : "malformed" } ?? "malformed"
        }
    }

    static let bundleId = "com.demo.game"
    static let subscriptions = ["com.demo.monthly.sub": 1, "com.demo.quarterly.sub": 3, "com.demo.yearly.sub": 12]
    static let nonRenewing = ["com.demo.onetime.monthly", "com.demo.onetime.quarterly", "com.demo.onetime.yearly"]

    private let signer: JWSSigner
    private let forger: JWSSigner
    private let appStore: FakeTransactionStore?
    private var random: SeededRandom
    private let now: Date
    private var nextTransaction: Int64 = 2_000_000_100_000_000
    private var issued: [(jws: String, userId: String)] = []
    private var counter = 0
    private let runId: String

    /// - Parameters:
    ///   - signer: signs with the PKI the verifier trusts for the run.
    ///   - forger: signs with a look-alike PKI the verifier does not trust.
    ///   - seed: makes the stream reproducible.
    ///   - now: the instant transactions are signed at.
    ///   - appStore: the fake App Store's purchases, for `transactionId` and `appReceipt` submissions
    ///     (without one those kinds are expected to be answered `unsupported-kind`).
    init(signer: JWSSigner, forger: JWSSigner, seed: UInt64, now: Date = Date(), appStore: FakeTransactionStore? = nil) {
        self.signer = signer
        self.forger = forger
        self.appStore = appStore
        self.random = SeededRandom(seed: seed)
        self.now = now
        self.runId = String(seed, radix: 36)
    }

    /// The next submission.
    mutating func next() throws -> Submission {
        counter += 1
        let submissionId = "demo-\(runId)-\(counter)"
        let userId = "player-\(Int.random(in: 1...max(50, counter / 3), using: &random))"
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 55..<62:
            // An App Store Server Notification V2 carrying the signed transaction (one in seven
            // with a forged nested transaction, which must sink the whole notification).
            let (transaction, action) = genuineTransaction()
            let forgedNested = roll == 61
            let nested = try (forgedNested ? forger : signer).sign(payload: transaction.payload())
            let notification = try signer.sign(payload: notificationPayload(for: transaction, nested: nested))
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId,
                              value: record(submissionId, userId, "serverNotification", notification),
                              expectation: forgedNested ? .rejected(reason: "untrusted-root") : .entitlement(action: action))
        case 0..<55:
            let (transaction, action) = genuineTransaction()
            let jws = try signer.sign(payload: transaction.payload())
            issued.append((jws, userId))
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId, value: record(submissionId, userId, "signedTransaction", jws),
                              expectation: .entitlement(action: action))
        case 62..<74 where !issued.isEmpty:
            // The same signed transaction submitted again (client retry, restored purchase).
            let earlier = issued[Int.random(in: 0..<issued.count, using: &random)]
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + earlier.userId, value: record(submissionId, earlier.userId, "signedTransaction", earlier.jws),
                              expectation: .duplicate)
        case 74..<80:
            let (transaction, _) = genuineTransaction()
            let jws = try forger.sign(payload: transaction.payload())
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId, value: record(submissionId, userId, "signedTransaction", jws),
                              expectation: .rejected(reason: "untrusted-root"))
        case 80..<84:
            let (transaction, _) = genuineTransaction()
            let jws = Self.tamper(try signer.sign(payload: transaction.payload()))
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId, value: record(submissionId, userId, "signedTransaction", jws),
                              expectation: .rejected(reason: "invalid-signature"))
        case 84..<87:
            var (transaction, _) = genuineTransaction()
            transaction.bundleId = "com.other.app"
            let jws = try signer.sign(payload: transaction.payload())
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId, value: record(submissionId, userId, "signedTransaction", jws),
                              expectation: .rejected(reason: "bundle-id-mismatch"))
        case 87..<94:
            let (value, reason) = malformed(submissionId, userId)
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId, value: value, expectation: .rejected(reason: reason))
        default:
            guard let appStore else {
                let kinds: [(String, String)] = [("transactionId", String(nextTransaction + 17)),
                                                 ("appReceipt", "MIIT" + String(repeating: "QUJD", count: 40))]
                let (kind, payload) = kinds[Int.random(in: 0..<kinds.count, using: &random)]
                return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId,
                                  value: record(submissionId, userId, kind, payload), expectation: .rejected(reason: "unsupported-kind"))
            }
            // A purchase Apple knows about, submitted as a bare transaction id (verified through the
            // App Store Server API) or as a StoreKit 1 receipt (verified through verifyReceipt).
            let purchase = appStore.purchase(productId: "com.demo.coins.100", type: .consumable,
                                             environment: Bool.random(using: &random) ? .production : .sandbox,
                                             purchaseDate: now.addingTimeInterval(-60))
            if Bool.random(using: &random) {
                return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId,
                                  value: record(submissionId, userId, "transactionId", purchase.transactionId),
                                  expectation: .entitlement(action: "grant"))
            }
            let receipt = appStore.makeReceipt(customerId: purchase.customerId, environment: purchase.environment)
            return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId,
                              value: record(submissionId, userId, "appReceipt", receipt), expectation: .entitlement(action: "grant"))
        }
    }

    /// The next submission, always a genuine, first-time signed transaction (benchmarks).
    mutating func nextGenuine() throws -> Submission {
        counter += 1
        let submissionId = "bench-\(runId)-\(counter)"
        let userId = "player-\(counter)"
        let (transaction, action) = genuineTransaction()
        let jws = try signer.sign(payload: transaction.payload())
        return Submission(submissionId: submissionId, key: Self.bundleId + "/" + userId,
                          value: record(submissionId, userId, "signedTransaction", jws), expectation: .entitlement(action: action))
    }

    /// A genuine transaction of the demo catalogue and the action fulfil must take for it.
    private mutating func genuineTransaction() -> (SampleTransaction, String) {
        nextTransaction += Int64.random(in: 1...9, using: &random)
        let id = String(nextTransaction)
        let day: TimeInterval = 86_400
        let purchase = now.addingTimeInterval(-Double(Int.random(in: 0...20, using: &random)) * day)
        let style = Int.random(in: 0..<100, using: &random)
        if style < 45 {
            let (product, months) = Self.subscriptions.sorted { $0.key < $1.key }[Int.random(in: 0..<3, using: &random)]
            var tx = SampleTransaction(transactionId: id, originalTransactionId: id, bundleId: Self.bundleId,
                                       productId: product, type: "Auto-Renewable Subscription", purchaseDate: purchase,
                                       expiresDate: purchase.addingTimeInterval(Double(months) * 30 * day), signedDate: now)
            var action = "grant"
            if style < 12 {
                tx.originalTransactionId = String(nextTransaction - 1_000_000)
                action = "renew"
            } else if style < 16 {
                tx.expiresDate = now.addingTimeInterval(-day)
                tx.purchaseDate = now.addingTimeInterval(-Double(months) * 31 * day)
                action = "expire"
            } else if style < 20 {
                tx.revocationDate = now.addingTimeInterval(-3600)
                action = "revoke"
            }
            return (tx, action)
        } else if style < 70 {
            let product = Self.nonRenewing[Int.random(in: 0..<3, using: &random)]
            return (SampleTransaction(transactionId: id, originalTransactionId: id, bundleId: Self.bundleId, productId: product,
                                      type: "Non-Renewing Subscription", purchaseDate: purchase, signedDate: now), "grant")
        } else if style < 90 {
            var tx = SampleTransaction(transactionId: id, originalTransactionId: id, bundleId: Self.bundleId,
                                       productId: "com.demo.coins.100", type: "Consumable", purchaseDate: purchase, signedDate: now)
            tx.quantity = Int.random(in: 1...3, using: &random)
            return (tx, "grant")
        } else {
            return (SampleTransaction(transactionId: id, originalTransactionId: id, bundleId: Self.bundleId,
                                      productId: "com.demo.unlock.pro", type: "Non-Consumable", purchaseDate: purchase,
                                      signedDate: now), "grant")
        }
    }

    /// The notification Apple would send for `transaction` (type from its state), with `nested`
    /// as `data.signedTransactionInfo`.
    private mutating func notificationPayload(for transaction: SampleTransaction, nested: String) -> [UInt8] {
        let (type, subtype): (String, String?) =
            if transaction.revocationDate != nil { ("REFUND", nil) }
            else if transaction.type == "Auto-Renewable Subscription" {
                if let expires = transaction.expiresDate, expires <= transaction.signedDate { ("EXPIRED", "VOLUNTARY") }
                else if transaction.transactionId == transaction.originalTransactionId { ("SUBSCRIBED", "INITIAL_BUY") }
                else { ("DID_RENEW", nil) }
            } else { ("ONE_TIME_CHARGE", nil) }
        var data = JSONText()
        data.add("bundleId", Self.bundleId)
        data.add("bundleVersion", "1")
        data.add("environment", transaction.environment)
        data.add("signedTransactionInfo", nested)
        var json = JSONText()
        json.add("notificationType", type)
        if let subtype { json.add("subtype", subtype) }
        json.add("notificationUUID", UUID(uuid: (UInt8.random(in: 0...255, using: &random), 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0,
                                                 UInt8(counter & 0xFF), UInt8((counter >> 8) & 0xFF))).uuidString.lowercased())
        json.add("version", "2.0")
        json.add("signedDate", Int64((transaction.signedDate.timeIntervalSince1970 * 1000).rounded()))
        json.add("data", object: data)
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

    private func record(_ submissionId: String, _ userId: String, _ kind: String, _ payload: String) -> [UInt8] {
        var json = JSONText()
        json.add("schema", "receipt-submitted/v1")
        json.add("submissionId", submissionId)
        json.add("userId", userId)
        json.add("bundleId", Self.bundleId)
        json.add("kind", kind)
        json.add("payload", payload)
        json.add("submittedAt", "2026-11-30T06:00:00Z")
        return json.bytes
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
