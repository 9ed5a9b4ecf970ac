import AppStore
import Foundation
import Observability
import Synchronization
@testable import Pipeline

/// Fixed instants used across tests.
enum Fixtures {
    static let now = RFC3339.date(from: "2026-11-30T06:00:00Z")!
    static let submittedAt = "2026-11-30T05:59:00Z"

    static func date(_ text: String) -> Date { RFC3339.date(from: text)! }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A structurally valid (unsigned) compact JWS.
    static let jws = base64URL(#"{"alg":"ES256","x5c":["MIIB"]}"#) + "." + base64URL(#"{"transactionId":"2000000000000001"}"#)
        + "." + base64URL(String(repeating: "s", count: 64))

    /// A `receipt-submitted/v1` JSON document with overridable fields; `nil` removes a field.
    static func submission(_ overrides: [String: Any?] = [:]) -> [UInt8] {
        var fields: [String: Any] = [
            "schema": "receipt-submitted/v1", "submissionId": "sub-1", "userId": "user-1",
            "bundleId": "com.example.game", "kind": "signedTransaction", "payload": jws,
            "submittedAt": submittedAt,
        ]
        for (key, value) in overrides {
            if let value { fields[key] = value } else { fields.removeValue(forKey: key) }
        }
        return Array(try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
    }

    static func context(attempt: Int = 1) -> StageContext {
        StageContext(logger: .disabled, attempt: attempt, now: now)
    }

    static func transaction(id: String = "1001", original: String? = nil, productId: String = "com.demo.monthly.sub",
                            type: ProductType = .autoRenewable, quantity: Int = 1,
                            purchase: String? = "2026-11-30T05:00:00Z", expires: String? = "2026-12-30T05:00:00Z",
                            revoked: String? = nil, signed: String? = "2026-11-30T05:30:00Z",
                            bundleId: String = "com.example.game") -> VerifiedTransaction {
        VerifiedTransaction(transactionId: id, originalTransactionId: original ?? id, bundleId: bundleId,
                            productId: productId, type: type.appleType, quantity: quantity,
                            purchaseDate: purchase.map(date), expiresDate: expires.map(date),
                            revocationDate: revoked.map(date), revocationReason: revoked == nil ? nil : 0,
                            environment: "Sandbox", signedDate: signed.map(date))
    }

    static func ingested(kind: SubmissionKind = .signedTransaction, payload: String = jws,
                         submissionId: String = "sub-1") -> IngestedSubmission {
        IngestedSubmission(submissionId: submissionId, bundleId: "com.example.game", userId: "user-1", kind: kind,
                           payload: payload, submittedAt: date(submittedAt), ingestedAt: now)
    }

    static func verified(_ transaction: VerifiedTransaction, submissionId: String = "sub-1",
                         userId: String = "user-1") -> ReceiptVerified {
        ReceiptVerified(submissionId: submissionId, bundleId: "com.example.game", userId: userId,
                        kind: .signedTransaction, verifiedAt: now, transaction: transaction)
    }

    static let catalogue = try! ProductCatalogue(products: [
        CatalogueProduct(productId: "com.demo.monthly.sub", type: .autoRenewable, entitlement: "premium",
                         subscriptionGroup: "premium", level: 1),
        CatalogueProduct(productId: "com.demo.onetime.monthly", type: .nonRenewing, entitlement: "premium", durationMonths: 1),
        CatalogueProduct(productId: "com.demo.onetime.quarterly", type: .nonRenewing, entitlement: "premium", durationMonths: 3),
        CatalogueProduct(productId: "com.demo.onetime.yearly", type: .nonRenewing, entitlement: "premium", durationMonths: 12),
        CatalogueProduct(productId: "com.demo.coins.100", type: .consumable, entitlement: "coins", unitsPerPurchase: 100),
        CatalogueProduct(productId: "com.demo.unlock.pro", type: .nonConsumable, entitlement: "pro"),
    ])
}

/// A stage result that was not the one a test expected.
struct UnexpectedResult: Error, CustomStringConvertible {
    var description: String
}

extension StageResult {
    /// The outputs of an `.emit`; throws for anything else.
    func outputs() throws -> [Output] {
        guard case .emit(let outputs) = self else { throw UnexpectedResult(description: "expected emit, got \(self)") }
        return outputs
    }

    /// The reason and subject of a `.reject`; throws for anything else.
    func rejection() throws -> (reason: ReasonCode, detail: String, subject: SubmissionSubject) {
        guard case .reject(let reason, let detail, let subject) = self else {
            throw UnexpectedResult(description: "expected reject, got \(self)")
        }
        return (reason, detail, subject)
    }

    /// The outcome and subject of a `.done`; throws for anything else.
    func outcome() throws -> (outcome: OutcomeCode, subject: SubmissionSubject) {
        guard case .done(let outcome, let subject) = self else { throw UnexpectedResult(description: "expected done, got \(self)") }
        return (outcome, subject)
    }
}

/// A value tests can update from any task and wait on without sleeping.
final class Probe<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var version = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextId = 0
    }

    private let state: Mutex<State>

    init(_ initial: Value) {
        state = Mutex(State(value: initial))
    }

    var value: Value { state.withLock { $0.value } }

    func update(_ body: (inout Value) -> Void) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            body(&state.value)
            state.version += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until `predicate` holds; false after `timeout`.
    func waitUntil(timeout: Duration = .seconds(10), _ predicate: @escaping @Sendable (Value) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (value, version) = state.withLock { ($0.value, $0.version) }
            if predicate(value) { return true }
            if ContinuousClock.now >= deadline || Task.isCancelled { return false }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.changed(since: version) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    private func changed(since version: Int) async {
        let id = state.withLock { state -> Int in
            state.nextId += 1
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.version != version || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// A latch stage code can wait on until the test opens it. Waiting is cancellable.
final class Gate: Sendable {
    private let opened = Probe(false)

    func open() { opened.update { $0 = true } }

    /// Waits until opened (or the task is cancelled; then throws CancellationError).
    func wait() async throws {
        while !(await opened.waitUntil(timeout: .seconds(3600)) { $0 }) {
            try Task.checkCancellation()
        }
        try Task.checkCancellation()
    }
}

/// The input of runner test stages.
struct TestMessage: Codable, Sendable, Equatable {
    var id: String
    var key: String = "k"
}

/// The output of runner test stages (goes to the `verified` role's topic, `receipts.verified`).
struct TestOutput: OutboundMessage, Equatable, Decodable {
    static var outputTopic: OutputTopic { .verified }
    var id: String
    var recordKey: String
}

/// A stage whose behaviour is a closure; named `verify` so it consumes `receipts.ingested`.
struct ClosureStage: Stage {
    typealias Input = TestMessage
    typealias Output = TestOutput
    static var name: StageName { .verify }

    let body: @Sendable (TestMessage, StageContext) async throws -> StageResult<TestOutput>
    /// Which inputs may wait on the outside (default: all).
    let mayWait: @Sendable (TestMessage) -> Bool

    init(mayWait: @escaping @Sendable (TestMessage) -> Bool = { _ in true },
         _ body: @escaping @Sendable (TestMessage, StageContext) async throws -> StageResult<TestOutput>) {
        self.mayWait = mayWait
        self.body = body
    }

    func mayWaitOnOutside(_ input: TestMessage) -> Bool { mayWait(input) }

    func process(_ input: TestMessage, context: StageContext) async throws -> StageResult<TestOutput> {
        try await body(input, context)
    }

    /// Echoes every input as one output.
    static let echo = ClosureStage { input, _ in .emit([TestOutput(id: input.id, recordKey: input.key)]) }
}

/// A ``ClosureStage`` that declares it waits on nothing outside (no processing timeout).
struct ComputeOnlyStage: Stage {
    typealias Input = TestMessage
    typealias Output = TestOutput
    static var name: StageName { .verify }
    static var waitsOn: StageWaiting { .nothing }

    let body: @Sendable (TestMessage, StageContext) async throws -> StageResult<TestOutput>

    func process(_ input: TestMessage, context: StageContext) async throws -> StageResult<TestOutput> {
        try await body(input, context)
    }
}

extension InMemoryTransport {
    /// Produces a test message to `topic` keyed by its key.
    @discardableResult
    func produce(_ message: TestMessage, topic: String = "receipts.ingested", partition: Int32? = nil) -> RecordPosition {
        produce(topic: topic, key: Array(message.key.utf8), value: try! ContractCoding.encode(message),
                partition: partition)
    }

    /// The ids of test outputs produced so far.
    func outputIds(topic: String = "receipts.verified") -> [String] {
        records(in: topic).map { try! ContractCoding.decode(TestOutput.self, from: $0.value).id }
    }

    func header(_ name: String, of record: InboundRecord) -> String? {
        RecordHeaders.value(of: name, in: record.headers)
    }
}


/// Runs `runner` in a child task during `body`, then shuts it down gracefully and returns what
/// `run()` threw (nil if it returned normally).
@discardableResult
func whileRunning<S: Stage>(_ runner: StageRunner<S>, _ body: () async throws -> Void) async throws -> (any Error)? {
    try await withThrowingTaskGroup(of: (any Error)?.self) { group in
        group.addTask {
            do { try await runner.run(); return nil } catch { return error }
        }
        try await body()
        runner.shutdownGracefully()
        return try await group.next()!
    }
}
