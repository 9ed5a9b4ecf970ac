import Foundation
import Observability
import Synchronization
import Testing
@testable import Pipeline

private struct PrepareFailed: Error {}

/// A hook that records its calls; preparation waits for `gate` and fails `failures` times first.
private final class RecordingHook: PartitionAssignmentHook {
    struct Calls: Sendable {
        var prepared: [[TopicPartition]] = []
        var finished: [[TopicPartition]] = []
        var cancelled = 0
        var released: [[TopicPartition]] = []
    }

    let calls = Probe(Calls())
    let gate = Gate()
    private let failures: Mutex<Int>

    init(failures: Int = 0, open: Bool = false) {
        self.failures = Mutex(failures)
        if open { gate.open() }
    }

    func prepare(_ partitions: [TopicPartition], epoch: AssignmentEpoch) async throws {
        calls.update { $0.prepared.append(partitions) }
        do {
            try await gate.wait()
        } catch {
            calls.update { $0.cancelled += 1 }
            throw error
        }
        if failures.withLock({ count -> Bool in defer { count -= 1 }; return count > 0 }) { throw PrepareFailed() }
        calls.update { $0.finished.append(partitions) }
    }

    func release(_ partitions: [TopicPartition]) async {
        calls.update { $0.released.append(partitions) }
    }
}

/// With a ``PartitionAssignmentHook`` the runner admits a partition's records only once the hook
/// has prepared the partition; it pauses the partition meanwhile and keeps serving rebalances.
@Suite(.timeLimit(.minutes(1)))
struct PartitionReadinessTests {
    let input = "receipts.ingested"

    private func runner(_ transport: InMemoryTransport, hook: RecordingHook,
                        configuration: StageRunnerConfiguration = StageRunnerConfiguration()) -> StageRunner<ClosureStage> {
        StageRunner(stage: ClosureStage.echo, source: transport.source(group: "g", topics: [input]), sink: transport.sink,
                    configuration: configuration, assignmentHook: hook, logger: .disabled, metrics: MetricsRegistry(),
                    clock: { Fixtures.now })
    }

    @Test func recordsWaitUntilTheirPartitionIsPreparedWhilePaused() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 2)
        for i in 0..<4 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)"), partition: Int32(i % 2)) }
        let hook = RecordingHook()
        let runner = runner(transport, hook: hook)
        try await whileRunning(runner) {
            #expect(await hook.calls.waitUntil { $0.prepared.count == 1 })
            let both = [TopicPartition(topic: input, partition: 0), TopicPartition(topic: input, partition: 1)]
            #expect(hook.calls.value.prepared == [both])
            #expect(await transport.waitUntil { $0.pausedPartitions(group: "g") == Set(both) })
            #expect(transport.records(in: "receipts.verified").isEmpty)
            #expect(transport.storedOffset(group: "g", topic: input, partition: 0) == nil)
            #expect(runner.partitionsBeingPrepared == 2)  // what /readyz reports as not ready
            hook.gate.open()
            #expect(await transport.waitUntil { $0.records(in: "receipts.verified").count == 4 })
            #expect(runner.partitionsBeingPrepared == 0)
            #expect(await transport.waitUntil { $0.pausedPartitions(group: "g").isEmpty })
            #expect(await transport.waitUntil { $0.storedOffset(group: "g", topic: "receipts.ingested", partition: 1) == 1 })
        }
        #expect(runner.unpreparedRecordCount == 0)
        // Stopping releases everything the hook prepared.
        #expect(hook.calls.value.released.flatMap { $0 }.count == 2)
    }

    @Test func aFailedPreparationIsRetriedAndTheRecordsThenFlow() async throws {
        let transport = InMemoryTransport()
        transport.produce(TestMessage(id: "m0"))
        let hook = RecordingHook(failures: 2, open: true)
        let runner = runner(transport, hook: hook,
                            configuration: StageRunnerConfiguration(preparationRetryDelay: .milliseconds(10)))
        try await whileRunning(runner) {
            #expect(await transport.waitUntil { $0.outputIds() == ["m0"] })
        }
        #expect(hook.calls.value.prepared.count == 3)
        #expect(hook.calls.value.finished.count == 1)
    }

    @Test func revocationDuringPreparationCancelsItReleasesAndDropsHeldRecords() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 2)
        for i in 0..<4 { transport.produce(TestMessage(id: "m\(i)", key: "k\(i)"), partition: Int32(i % 2)) }
        let hook = RecordingHook()
        let runner = runner(transport, hook: hook)
        let p0 = TopicPartition(topic: input, partition: 0), p1 = TopicPartition(topic: input, partition: 1)
        try await whileRunning(runner) {
            #expect(await hook.calls.waitUntil { $0.prepared.count == 1 })
            await transport.revoke(group: "g", partitions: [p0])
            // The batch is cancelled; the partition that stays is prepared again on its own.
            #expect(await hook.calls.waitUntil { $0.prepared.count == 2 && $0.cancelled == 1 })
            #expect(hook.calls.value.prepared.last == [p1])
            #expect(hook.calls.value.released == [[p0]])
            hook.gate.open()
            #expect(await transport.waitUntil { Set($0.outputIds()) == ["m1", "m3"] })
            // Assigned again: prepared again (state never survives a release), then its records flow.
            transport.assign(group: "g", partitions: [p0])
            #expect(await transport.waitUntil { $0.outputIds().count == 4 })
            #expect(hook.calls.value.prepared.last == [p0])
        }
        #expect(transport.storedOffset(group: "g", topic: input, partition: 0) == 1)
    }

    @Test func recordsOfPreparedPartitionsFlowWhileANewOneIsPrepared() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 2)
        let hook = RecordingHook(open: true)
        let runner = runner(transport, hook: hook)
        let p1 = TopicPartition(topic: input, partition: 1)
        try await whileRunning(runner) {
            #expect(await hook.calls.waitUntil { $0.finished.count == 1 })
            await transport.revoke(group: "g", partitions: [p1])
            transport.produce(TestMessage(id: "a", key: "a"), partition: 0)
            #expect(await transport.waitUntil { $0.outputIds() == ["a"] })
            transport.assign(group: "g", partitions: [p1])
            #expect(await hook.calls.waitUntil { $0.finished.count == 2 })
            #expect(hook.calls.value.finished.last == [p1])
            transport.produce(TestMessage(id: "b", key: "b"), partition: 1)
            #expect(await transport.waitUntil { $0.outputIds() == ["a", "b"] })
        }
    }
}
