import AppStore
import Foundation
@testable import Pipeline

/// Realistic instances of every contract receiptd writes, built with the real types: ingest's,
/// fulfil's and the owner view's outputs by running those stages over realistic inputs (a
/// subscription through grace period, billing retry, recovery, expiry and refund; consumables;
/// Family Sharing; a transfer), plus one event per ``EntitlementChangeKind``.
struct ContractSamples {
    /// Encoded ``ReceiptSubmitted`` values, plus what the Swift type cannot express but other
    /// producers may send: a notification with `userId` omitted or `null`, a timestamp with an offset.
    var submitted: [[UInt8]] = []
    var ingested: [IngestedSubmission] = []
    var verified: [ReceiptVerified] = []
    var rejected: [ReceiptRejected] = []
    var outcomes: [ReceiptOutcome] = []
    var changes: [EntitlementChanged] = []
    var ownerUpdates: [OwnerPurchaseUpdate] = []
    var states: [EntitlementState] = []
    var consumptionRequests: [ConsumptionRequest] = []
    var consumptionAnswers: [ConsumptionAnswer] = []
    var consumptionOutcomes: [ConsumptionOutcome] = []

    static let bundleId = "com.example.game"

    static func at(_ text: String) -> Date { ContractCoding.date(from: text)! }

    /// A structurally valid (unsigned) compact JWS, as ingest checks it.
    static let jws = [#"{"alg":"ES256","x5c":["MIIBkTCB+wIJAL"]}"#, #"{"transactionId":"2000000812345678"}"#,
                      String(repeating: "s", count: 64)]
        .map { Data($0.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") }
        .joined(separator: ".")

    /// Every sample, encoded with ``ContractCoding/encode(_:)``, with the schema file it must match.
    func cases() throws -> [JSONSchemaValidator.Case] {
        var cases: [JSONSchemaValidator.Case] = []
        func add(_ schema: String, _ documents: [[UInt8]]) {
            for (index, json) in documents.enumerated() {
                cases.append(JSONSchemaValidator.Case(id: "\(schema) #\(index)", schema: schema, json: json))
            }
        }
        add("receipt-submitted.v1", submitted)
        add("receipt-ingested.v1", try ingested.map(ContractCoding.encode))
        add("receipt-verified.v1", try verified.map(ContractCoding.encode))
        add("receipt-rejected.v1", try rejected.map(ContractCoding.encode))
        add("receipt-outcome.v1", try outcomes.map(ContractCoding.encode))
        add("entitlement-changed.v2", try changes.map(ContractCoding.encode))
        add("owner-purchase.v1", try ownerUpdates.map(ContractCoding.encode))
        add("entitlement-state.v1", try states.map(ContractCoding.encode))
        add("consumption-request.v1", try consumptionRequests.map(ContractCoding.encode))
        add("consumption-answer.v1", try consumptionAnswers.map(ContractCoding.encode))
        add("consumption-outcome.v1", try consumptionOutcomes.map(ContractCoding.encode))
        return cases
    }

    /// Builds every sample; throws if a stage does not accept what a sample feeds it.
    static func make() async throws -> ContractSamples {
        var samples = ContractSamples()
        try samples.addSubmissionsAndIngest()
        samples.verified = Story.inputs
        try await samples.runFulfil()
        samples.addEveryChangeKind()
        try await samples.runOwners()
        try samples.addVerifyAndOwnersVerdicts()
        try await samples.addConsumption()
        return samples
    }

    /// `receipt-submitted/v1` of every kind (a notification's `userId` empty, omitted and `null`),
    /// ingested by the real ``IngestStage``; broken submissions become ingest's rejections.
    private mutating func addSubmissionsAndIngest() throws {
        let receipt = Data("StoreKit 1 receipt bytes!".utf8).base64EncodedString()
        let wrapped = String(receipt.prefix(16)) + "\r\n" + String(receipt.dropFirst(16).filter { $0 != "=" })
        let typed = [
            ReceiptSubmitted(submissionId: "app-7f3c9a1e", userId: "player-7", bundleId: Self.bundleId,
                             kind: .signedTransaction, payload: Self.jws, submittedAt: Self.at("2026-11-30T05:59:00Z")),
            ReceiptSubmitted(submissionId: "asn:6f1e2d3c-0001", userId: "", bundleId: Self.bundleId,
                             kind: .serverNotification, payload: Self.jws,
                             submittedAt: Self.at("2026-12-30T05:00:01.250Z")),
            ReceiptSubmitted(submissionId: "restore.2026-11-30", userId: "player-7", bundleId: Self.bundleId,
                             kind: .appReceipt, payload: wrapped, submittedAt: Self.at("2026-11-30T06:10:00.007Z")),
            ReceiptSubmitted(submissionId: "lookup_0042", userId: "Zoë ✓ 7", bundleId: Self.bundleId,
                             kind: .transactionId, payload: "2000000812345678", submittedAt: Self.at("2026-11-30T06:11:00Z")),
            ReceiptSubmitted(submissionId: "renewal-info-1", userId: "player-7", bundleId: "com.example.game.watchkitapp",
                             kind: .signedRenewalInfo, payload: Self.jws, submittedAt: Self.at("2026-12-01T00:00:00Z")),
        ]
        submitted = try typed.map(ContractCoding.encode)
        let notification = submitted[1]
        submitted.append(try JSONEdit.removing(["userId"], in: notification))
        submitted.append(try JSONEdit.setting(["userId"], to: NSNull(), in: notification))
        submitted.append(try JSONEdit.setting(["submittedAt"], to: "2026-12-30T07:00:01.25+02:00", in: notification))

        let ingest = IngestStage()
        let ingestedAt = Self.at("2026-12-30T06:00:00.031Z")
        ingested = try submitted.map { try ingest.ingest($0, now: ingestedAt).get() }

        let broken: [[UInt8]] = [
            Array(#"{"schema":"receipt-submitted/v1","submissionId":"#.utf8),
            [0xFF, 0xFE, 0x7B, 0x00, 0x22],
            try JSONEdit.removing(["userId"], in: submitted[0]),
            try JSONEdit.setting(["kind"], to: "promotionalOffer", in: submitted[0]),
            try JSONEdit.setting(["payload"], to: "eyJhbGciOiJFUzI1NiJ9.e30", in: submitted[0]),
        ]
        for (index, bytes) in broken.enumerated() {
            guard case .failure(let refusal) = ingest.ingest(bytes, now: ingestedAt) else {
                throw SampleError("broken submission \(index) was accepted")
            }
            rejected.append(ReceiptRejected(stage: .ingest, reason: refusal.reason, detail: refusal.detail,
                                            subject: refusal.subject, rejectedAt: ingestedAt, originalValue: bytes,
                                            maxOriginalBytes: index == 2 ? 24 : 256 * 1024))
        }
    }

    /// Runs the story through the real ``FulfilStage``: events, owner updates, and its rejections
    /// and outcomes as the runner writes them.
    private mutating func runFulfil() async throws {
        let fulfil = FulfilStage(catalogue: Story.catalogue,
                                 policy: FulfilmentPolicy(transfer: .transfer, sandbox: .tag),
                                 ledger: KeyedStateStore(inMemoryCapacity: 1_000))
        for input in verified {
            let now = input.verifiedAt
            switch try await fulfil.process(input, context: StageContext(now: now)) {
            case .emit(let outputs):
                changes += outputs.compactMap(\.event)
                ownerUpdates += outputs.compactMap(\.ownerUpdate)
            case .reject(let reason, let detail, let subject):
                rejected.append(ReceiptRejected(stage: .fulfil, reason: reason, detail: detail, subject: subject,
                                                rejectedAt: now, originalValue: try ContractCoding.encode(input)))
            case .done(let outcome, let subject):
                outcomes.append(ReceiptOutcome(submissionId: subject.submissionId, stage: .fulfil, outcome: outcome,
                                               transactionId: subject.transactionId, at: now))
            }
        }
    }

    /// One event (and owner update) per change kind, built as fulfil builds them, so every
    /// change, action and status is in the samples whatever the story reaches.
    private mutating func addEveryChangeKind() {
        let owner = OwnerKey(bundleId: Self.bundleId, userId: "player-9")
        for (index, kind) in EntitlementChangeKind.allCases.enumerated() {
            let example = ChangeExample(kind, index: index, owner: owner)
            let event = EntitlementChanged(change: example.change, index: 0, purchase: example.state,
                                           transaction: example.transaction, submissionId: "sub-\(kind.rawValue)",
                                           effectiveAt: example.transaction.signedDate ?? Self.at("2027-03-01T00:00:00Z"))
            changes.append(event)
            let state = example.state
            ownerUpdates.append(OwnerPurchaseUpdate(owner: owner, entitlement: state.entitlement, purchase: OwnerPurchase(
                originalTransactionId: state.originalTransactionId, productId: example.change.productId,
                productType: state.productType, status: example.change.status, hasAccess: example.change.hasAccess,
                validUntil: example.change.validUntil, periodStart: state.periodStart, durationMonths: state.durationMonths,
                quantity: state.quantity, ownershipType: state.ownershipType, environment: state.environment,
                changedAt: event.signedDate, version: state.version)))
        }
    }

    /// Folds every owner update through the real ``OwnersStage``.
    private mutating func runOwners() async throws {
        let owners = OwnersStage(store: KeyedStateStore(inMemoryCapacity: 1_000))
        let context = StageContext(now: Self.at("2027-03-15T00:00:00Z"))
        for update in ownerUpdates {
            if case .emit(let views) = try await owners.process(update, context: context) {
                states += views
            }
        }
    }

    /// What verify and the owner view write besides their outputs (a signature failure, an empty
    /// receipt, an undecodable owner update), with the subjects those stages know.
    private mutating func addVerifyAndOwnersVerdicts() throws {
        let input = ingested[0]
        let subject = SubmissionSubject(submissionId: input.submissionId, bundleId: input.bundleId, userId: input.userId,
                                        kind: input.kind.rawValue, payloadSHA256: input.payloadSHA256)
        let at = Self.at("2026-11-30T06:00:00.5Z")
        rejected.append(ReceiptRejected(stage: .verify, reason: "invalid-signature",
                                        detail: "the JWS signature does not verify with the leaf certificate's key",
                                        subject: subject, rejectedAt: at, originalValue: try ContractCoding.encode(input)))
        rejected.append(ReceiptRejected(stage: .owners, reason: .undecodable, detail: "not an owner-purchase/v1 record",
                                        subject: .unknown, rejectedAt: at,
                                        originalValue: Array(#"{"schema":"owner-purchase/v0"}"#.utf8)))
        outcomes.append(ReceiptOutcome(submissionId: input.submissionId, stage: .verify, outcome: .noTransactions,
                                       transactionId: nil, at: at))
        outcomes.append(ReceiptOutcome(submissionId: nil, stage: .fulfil, outcome: .staleSuppressed,
                                       transactionId: "2000000812345678", at: at))
    }
}

struct SampleError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Edits encoded JSON: the negative samples are real samples with one thing broken.
enum JSONEdit {
    /// `document` with the member at `path` (object keys, or decimal array indexes) set to `value`.
    static func setting(_ path: [String], to value: Any, in document: [UInt8]) throws -> [UInt8] {
        try edit(document) { edited(&$0, path[...], value) }
    }

    /// `document` without the member at `path`.
    static func removing(_ path: [String], in document: [UInt8]) throws -> [UInt8] {
        try edit(document) { edited(&$0, path[...], nil) }
    }

    private static func edit(_ document: [UInt8], _ body: (inout Any) -> Void) throws -> [UInt8] {
        var root = try JSONSerialization.jsonObject(with: Data(document))
        body(&root)
        return Array(try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    private static func edited(_ node: inout Any, _ path: ArraySlice<String>, _ value: Any?) {
        guard let key = path.first else { return }
        if var object = node as? [String: Any] {
            if path.count == 1 {
                object[key] = value
            } else if var child = object[key] {
                edited(&child, path.dropFirst(), value)
                object[key] = child
            }
            node = object
        } else if var array = node as? [Any], let index = Int(key), array.indices.contains(index) {
            if path.count == 1 {
                if let value { array[index] = value } else { array.remove(at: index) }
            } else {
                edited(&array[index], path.dropFirst(), value)
            }
            node = array
        }
    }
}
