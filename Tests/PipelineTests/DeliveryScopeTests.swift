import Foundation
import Observability
import Testing
@testable import Pipeline

private struct InjectedFailure: Error {}

/// The runner settles every attempt's ``DeliveryScope`` exactly once: delivered only when the
/// stage's emitted outputs were acknowledged.
@Suite(.timeLimit(.minutes(1)))
struct DeliveryScopeTests {
    /// Runs `stage` over one record per id and returns how each attempt's scope settled, by id.
    private func outcomes(ids: [String], transport: InMemoryTransport = InMemoryTransport(),
                          timeout: Duration = .seconds(30),
                          _ body: @escaping @Sendable (TestMessage) async throws -> StageResult<TestOutput>)
        async throws -> [String: Bool] {
        let scopes = Probe<[String: DeliveryScope]>([:])
        let stage = ClosureStage { message, context in
            let scope = try #require(context.delivery)
            scopes.update { $0[message.id] = scope }
            return try await body(message)
        }
        for (i, id) in ids.enumerated() { transport.produce(TestMessage(id: id, key: "k\(i)")) }
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: ["receipts.ingested"]),
                                 sink: transport.sink, configuration: StageRunnerConfiguration(processingTimeout: timeout),
                                 logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(runner) {
            #expect(await transport.waitUntil {
                $0.storedOffset(group: "g", topic: "receipts.ingested") == Int64(ids.count - 1)
            })
        }
        return scopes.value.compactMapValues(\.outcome)
    }

    @Test func emittedAndAcknowledgedOutputsSettleDelivered() async throws {
        let result = try await outcomes(ids: ["emit", "reject", "done", "fail"]) { message in
            switch message.id {
            case "emit": return .emit([TestOutput(id: message.id, recordKey: message.key)])
            case "reject": return .reject(reason: .invalidField, detail: "no")
            case "done": return .done(outcome: .duplicateSuppressed)
            default: throw InjectedFailure()
            }
        }
        #expect(result == ["emit": true, "reject": false, "done": false, "fail": false])
    }

    @Test func anAttemptThatTimedOutAfterDecidingSettlesNotDelivered() async throws {
        let result = try await outcomes(ids: ["slow"], timeout: .milliseconds(50)) { message in
            try? await Task.sleep(for: .milliseconds(200))  // ignores cancellation: decides too late
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        #expect(result == ["slow": false])
    }

    @Test func aFailedDeliverySettlesNotDelivered() async throws {
        let transport = InMemoryTransport()
        transport.setSendFailure { _ in InjectedFailure() }
        let scopes = Probe<[DeliveryScope]>([])
        let stage = ClosureStage { message, context in
            scopes.update { $0.append(context.delivery!) }
            return .emit([TestOutput(id: message.id, recordKey: message.key)])
        }
        transport.produce(TestMessage(id: "m"))
        let runner = StageRunner(stage: stage, source: transport.source(group: "g", topics: ["receipts.ingested"]),
                                 sink: transport.sink, logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        await #expect(throws: StageRunnerError.self) { try await runner.run() }
        #expect(scopes.value.map(\.outcome) == [false])
    }

    @Test func callbacksRunOnceAndLateRegistrationsSeeTheOutcome() {
        let scope = DeliveryScope(partition: 3)
        let calls = Probe<[Bool]>([])
        scope.onSettle { delivered in calls.update { $0.append(delivered) } }
        scope.settle(delivered: true)
        scope.settle(delivered: false)
        scope.onSettle { delivered in calls.update { $0.append(delivered) } }
        #expect(calls.value == [true, true])
        #expect(scope.outcome == true)
        #expect(scope.partition == 3)
    }
}
