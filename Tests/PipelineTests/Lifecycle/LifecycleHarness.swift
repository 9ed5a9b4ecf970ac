import AppStore
import Foundation
@testable import Pipeline

/// Drives signed inputs through the real verifier, fulfil and the owner view, in memory: what the
/// three workers do, minus Kafka. A notification whose owner is not known yet (`owner-unknown`,
/// transient) is held back and retried after the other inputs, as the retry tiers would.
struct LifecycleHarness {
    static let bundleId = "com.demo.game"
    static let pki = try! TestPKI.generate(validFrom: AppleShapes.day(-3650), validUntil: AppleShapes.day(3650),
                                           commonNamePrefix: "lifecycle")
    static let catalogue = try! ProductCatalogue(json: Array(#"""
    {"products": {
      "com.demo.vip.monthly":     {"type": "autoRenewable", "entitlement": "vip", "subscriptionGroup": "premium", "level": 1},
      "com.demo.yearly.sub":      {"type": "autoRenewable", "entitlement": "premium", "subscriptionGroup": "premium", "level": 2},
      "com.demo.monthly.sub":     {"type": "autoRenewable", "entitlement": "premium", "subscriptionGroup": "premium", "level": 4},
      "com.demo.onetime.monthly": {"type": "nonRenewing", "durationMonths": 1, "entitlement": "premium"},
      "com.demo.coins.100":       {"type": "consumable", "unitsPerPurchase": 100, "entitlement": "coins"},
      "com.demo.unlock.pro":      {"type": "nonConsumable", "entitlement": "pro"}
    }}
    """#.utf8))

    /// One submission: what a client (or Apple, for a notification without user) sent.
    struct Input: Sendable {
        var label: String
        var userId: String
        var kind: SubmissionKind
        var payload: String
    }

    /// What a run produced.
    struct Run {
        var events: [EntitlementChanged] = []
        /// Per input label: the outcome, rejection (`rejected:<reason>`) or actions emitted.
        var verdicts: [String: [String]] = [:]
        /// The owner view at the end, by `bundleId/userId/entitlement`.
        var owners: [String: EntitlementState] = [:]
    }

    let policy: FulfilmentPolicy
    private let verifier: AppStoreSubmissionVerifier

    init(policy: FulfilmentPolicy = FulfilmentPolicy()) {
        self.policy = policy
        let configuration = SignedDataVerifierConfiguration(trustAnchors: [Self.pki.root], environment: .any)
        verifier = AppStoreSubmissionVerifier(verifier: try! SignedDataVerifier(configuration: configuration))
    }

    // MARK: inputs

    static func sign(_ object: [String: Any]) -> String { try! pki.signer.sign(payload: AppleShapes.bytes(object)) }

    /// A StoreKit 2 transaction submitted by `user`.
    static func transaction(_ label: String, user: String, _ transaction: AppleShapes.Transaction) -> Input {
        Input(label: label, userId: user, kind: .signedTransaction, payload: sign(transaction.json()))
    }

    /// An App Store Server Notification V2 (`user` nil: as Apple sends it, naming no user).
    static func notification(_ label: String, user: String? = nil, type: String, subtype: String? = nil, signed: Date,
                             transaction: AppleShapes.Transaction?, renewal: AppleShapes.Renewal? = nil) -> Input {
        var renewal = renewal
        if let transaction, renewal?.original.isEmpty == true { renewal?.original = transaction.original }
        let payload = AppleShapes.notification(
            type: type, subtype: subtype, signed: signed, uuid: UUID().uuidString.lowercased(),
            transaction: transaction.map { sign($0.json()) }, renewal: renewal.map { sign($0.json()) },
            environment: transaction?.environment ?? "Production")
        return Input(label: label, userId: user ?? "", kind: .serverNotification, payload: sign(payload))
    }

    // MARK: running

    /// Runs `inputs` in order through verify → fulfil → owners with fresh state.
    func run(_ inputs: [Input]) async throws -> Run {
        let ledger = KeyedStateStore<PurchaseState>(inMemoryCapacity: 10_000)
        let ownerStore = KeyedStateStore<EntitlementState>(inMemoryCapacity: 10_000)
        let fulfil = FulfilStage(catalogue: Self.catalogue, policy: policy, ledger: ledger)
        let owners = OwnersStage(store: ownerStore)
        var run = Run()
        var pending = inputs
        var rounds = 0
        while !pending.isEmpty {
            rounds += 1
            var waiting: [Input] = []
            for input in pending {
                switch try await apply(input, fulfil: fulfil, owners: owners, run: &run) {
                case .waitingForOwner where rounds < 3: waiting.append(input)
                case .waitingForOwner: run.verdicts[input.label, default: []].append("dead-letter:owner-unknown")
                case .done: break
                }
            }
            pending = waiting
        }
        return run
    }

    private enum Step { case done, waitingForOwner }

    private func apply(_ input: Input, fulfil: FulfilStage, owners: OwnersStage, run: inout Run) async throws -> Step {
        let context = StageContext(now: AppleShapes.day(1000))
        let submission = IngestedSubmission(submissionId: input.label, bundleId: Self.bundleId, userId: input.userId,
                                            kind: input.kind, payload: input.payload, submittedAt: context.now,
                                            ingestedAt: context.now)
        let transactions: [VerifiedTransaction]
        do {
            transactions = try await verifier.verify(submission, context: context)
        } catch let error as StageError {
            run.verdicts[input.label, default: []].append("rejected:" + error.reason.rawValue)
            return .done
        }
        if transactions.isEmpty { run.verdicts[input.label, default: []].append("no-transactions") }
        for transaction in transactions {
            let verified = ReceiptVerified(submissionId: input.label, bundleId: Self.bundleId, userId: input.userId,
                                           kind: input.kind, verifiedAt: context.now, transaction: transaction)
            let result: StageResult<FulfilOutput>
            do {
                result = try await fulfil.process(verified, context: context)
            } catch let error as StageError where error.reason == .ownerUnknown {
                return .waitingForOwner
            }
            switch result {
            case .emit(let outputs):
                for output in outputs {
                    if let event = output.event {
                        run.events.append(event)
                        run.verdicts[input.label, default: []].append(event.action.rawValue)
                    }
                    if let update = output.ownerUpdate,
                       case .emit(let states) = try await owners.process(update, context: context) {
                        for state in states { run.owners[state.recordKey] = state }
                    }
                }
            case .done(let outcome, _):
                run.verdicts[input.label, default: []].append(outcome.rawValue)
            case .reject(let reason, _, _):
                run.verdicts[input.label, default: []].append("rejected:" + reason.rawValue)
            }
        }
        return .done
    }
}
