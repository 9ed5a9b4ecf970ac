import AppStore
import Foundation
import Observability
import Testing
@testable import Pipeline

/// Verify processes a round with the signatures of its offline submissions checked back to back
/// (``SignatureBatch``): every input must end exactly as processing it alone ends, through the
/// runner too.
@Suite(.timeLimit(.minutes(1)))
struct VerifyStageRoundTests {
    static let bundleId = LifecycleHarness.bundleId

    static func stage() throws -> VerifyStage {
        let configuration = SignedDataVerifierConfiguration(trustAnchors: [LifecycleHarness.pki.root], environment: .any)
        return VerifyStage(verifier: AppStoreSubmissionVerifier(verifier: try SignedDataVerifier(configuration: configuration)))
    }

    static func transaction(_ id: String, bundleId: String = bundleId) -> String {
        var transaction = AppleShapes.Transaction(id: id, original: id, product: "com.demo.unlock.pro", type: .nonConsumable,
                                                  purchase: AppleShapes.day(-1), signed: AppleShapes.day(0))
        transaction.bundleId = bundleId
        return LifecycleHarness.sign(transaction.json())
    }

    /// The JWS with its signature's first character changed: canonical base64url that no longer verifies.
    static func forged(_ jws: String) -> String {
        var parts = jws.split(separator: ".").map(String.init)
        parts[2] = (parts[2].first == "A" ? "B" : "A") + parts[2].dropFirst()
        return parts.joined(separator: ".")
    }

    static func submission(_ id: String, kind: SubmissionKind = .signedTransaction, payload: String) -> IngestedSubmission {
        IngestedSubmission(submissionId: id, bundleId: bundleId, userId: "user-1", kind: kind, payload: payload,
                           submittedAt: Fixtures.now, ingestedAt: Fixtures.now)
    }

    /// Inputs whose outcomes differ: emitted, rejected by the signature, by the binding, by kind, and none.
    static func inputs() -> [IngestedSubmission] {
        let renewal = AppleShapes.Renewal(original: "300", product: "com.demo.monthly.sub", signed: AppleShapes.day(0))
        let notification = LifecycleHarness.notification(
            "renewed", type: "DID_RENEW", signed: AppleShapes.day(0),
            transaction: AppleShapes.Transaction(id: "301", original: "300", product: "com.demo.monthly.sub", type: .autoRenewable,
                                                 purchase: AppleShapes.day(-1), expires: AppleShapes.day(29), signed: AppleShapes.day(0)),
            renewal: renewal)
        return [
            submission("genuine", payload: transaction("100")),
            submission("forged", payload: forged(transaction("101"))),
            submission("another app", payload: transaction("102", bundleId: "com.other.app")),
            submission("forged of another app", payload: forged(transaction("103", bundleId: "com.other.app"))),
            submission("malformed", payload: "not.a-jws"),
            submission("notification", kind: .serverNotification, payload: notification.payload),
            submission("forged notification", kind: .serverNotification, payload: forged(notification.payload)),
            submission("renewal info", kind: .signedRenewalInfo, payload: LifecycleHarness.sign(renewal.json())),
            submission("no Server API", kind: .transactionId, payload: "2000000000000001"),
            submission("genuine again", payload: transaction("100")),
        ]
    }

    /// A result as text: what was emitted, the rejection or outcome, or the error.
    static func describe(_ result: Result<StageResult<ReceiptVerified>, any Error>) -> String {
        switch result {
        case .success(.emit(let outputs)):
            "emit " + outputs.map { "\($0.transaction.transactionId) \($0.transaction.notification?.notificationType ?? "-")" }
                .joined(separator: ",")
        case .success(.reject(let reason, let detail, _)): "reject \(reason.rawValue): \(detail)"
        case .success(.done(let outcome, _)): "done \(outcome.rawValue)"
        case .failure(let error): "error \(error)"
        }
    }

    @Test func aRoundEndsEveryInputAsProcessingItAloneDoes() async throws {
        var alone: [String] = []
        for input in Self.inputs() {
            let stage = try Self.stage()
            do {
                alone.append(Self.describe(.success(try await stage.process(input, context: Fixtures.context()))))
            } catch {
                alone.append(Self.describe(.failure(error)))
            }
        }
        let stage = try Self.stage()
        // The first JWS caches the chain, so the round's checks wait in its batch.
        _ = try await stage.process(Self.submission("warm", payload: Self.transaction("99")), context: Fixtures.context())
        let round = await stage.process(round: Self.inputs().map { (input: $0, context: Fixtures.context()) })
        #expect(round.map(Self.describe) == alone)
        #expect(alone.map { $0.prefix(while: { $0 != " " }) } == [
            "emit", "error", "error", "error", "error", "emit", "error", "done", "reject", "emit",
        ])
        #expect(alone[1].contains("invalid-signature") && alone[3].contains("invalid-signature") && alone[6].contains("invalid-signature"))
        #expect(alone[2].contains("bundle-id-mismatch"))
        #expect(alone[5] == "emit 301 DID_RENEW")
    }

    /// Through the runner: one output per genuine input, each forgery rejected with its reason.
    @Test func theRunnerRoutesARoundsResultsPerInput() async throws {
        let transport = InMemoryTransport()
        let topics = Topics()
        let inputs = Self.inputs()
        for input in inputs {
            transport.produce(topic: topics.ingested, key: Array(input.recordKey.utf8), value: try ContractCoding.encode(input))
        }
        let runner = StageRunner(stage: try Self.stage(), source: transport.source(group: "verify", topics: [topics.ingested],
                                                                                    finishWhenIdle: true),
                                 sink: transport.sink, configuration: StageRunnerConfiguration(topics: topics), logger: .disabled,
                                 metrics: MetricsRegistry())
        try await runner.run()
        let verified = try transport.records(in: topics.verified).map { try ContractCoding.decode(ReceiptVerified.self, from: $0.value) }
        #expect(verified.map(\.submissionId).sorted() == ["genuine", "genuine again", "notification"])
        let rejected = try transport.records(in: topics.rejected).map { try ContractCoding.decode(ReceiptRejected.self, from: $0.value) }
        let reasons = Dictionary(uniqueKeysWithValues: rejected.map { ($0.submissionId ?? "?", $0.reason.rawValue) })
        #expect(reasons == [
            "forged": "invalid-signature", "another app": "bundle-id-mismatch", "forged of another app": "invalid-signature",
            "malformed": "malformed-jws", "forged notification": "invalid-signature", "no Server API": "unsupported-kind",
        ])
        #expect(transport.records(in: topics.outcomes).count == 1)
        #expect(transport.storedOffset(group: "verify", topic: topics.ingested) == Int64(inputs.count - 1))
    }
}
