import Foundation
@testable import Kafka
import Testing

/// The consumer's pause bookkeeping as pure state, without a broker: the paths a live test
/// reaches only by timing.
@Suite("Consumer state machine")
struct ConsumerStateMachineTests {
    private static func messages(_ count: Int, partition: Int32, topic: String = "t") -> [KafkaConsumerMessage] {
        (0..<count).map {
            KafkaConsumerMessage(topic: topic, partition: partition, offset: Int64($0), key: nil, value: [], headers: [],
                                 timestamp: nil)
        }
    }

    @Test("backpressure ends when a revocation empties the buffer, so the next assignment is fetched")
    func revocationEndsBackpressure() {
        var machine = KafkaConsumer.StateMachine(maxBuffered: 10)
        let old = KafkaTopicPartition(topic: "t", partition: 0)
        machine.didAssign([old])
        #expect(machine.messagesPolled(Self.messages(20, partition: 0)).backpressureEngaged)
        #expect(machine.reconcilePauses().pause == [old])

        _ = machine.willRevoke([old])
        _ = machine.didRevoke([old])
        let new = KafkaTopicPartition(topic: "t", partition: 1)
        machine.didAssign([new])
        // Nothing is buffered any more: a backpressure pause now would never be lifted, since
        // only taking a message could lift it and none can arrive.
        #expect(!machine.isBackpressurePaused)
        #expect(machine.reconcilePauses().pause.isEmpty)
    }

    @Test("backpressure ends when an application pause moves the buffer aside")
    func pauseEndsBackpressure() throws {
        var machine = KafkaConsumer.StateMachine(maxBuffered: 10)
        let p0 = KafkaTopicPartition(topic: "t", partition: 0), p1 = KafkaTopicPartition(topic: "t", partition: 1)
        machine.didAssign([p0, p1])
        _ = machine.messagesPolled(Self.messages(20, partition: 0))
        #expect(machine.isBackpressurePaused)
        _ = try machine.pause([p0]).get()
        // p0's messages wait in the held set, not the buffer: p1 must keep being fetched.
        #expect(!machine.isBackpressurePaused)
        #expect(machine.reconcilePauses().pause == [p0])
    }

    @Test("buffered messages are taken together, in order, up to a limit; taking them can release backpressure")
    func takeBuffered() {
        var machine = KafkaConsumer.StateMachine(maxBuffered: 10)
        machine.didAssign([KafkaTopicPartition(topic: "t", partition: 0)])
        #expect(machine.messagesPolled(Self.messages(20, partition: 0)).backpressureEngaged)
        let first = machine.takeBuffered(max: 8)
        #expect(first.messages.map(\.offset) == Array(0..<8))
        #expect(!first.wakePollThread && machine.isBackpressurePaused, "12 still buffered")
        let rest = machine.takeBuffered(max: 100)
        #expect(rest.messages.map(\.offset) == Array(8..<20))
        #expect(rest.wakePollThread && !machine.isBackpressurePaused)
        #expect(machine.takeBuffered(max: 5).messages.isEmpty)
    }

    @Test("backpressure stays while the buffer is still full")
    func backpressureHolds() {
        var machine = KafkaConsumer.StateMachine(maxBuffered: 10)
        let p0 = KafkaTopicPartition(topic: "t", partition: 0), p1 = KafkaTopicPartition(topic: "t", partition: 1)
        machine.didAssign([p0, p1])
        _ = machine.messagesPolled(Self.messages(20, partition: 0))
        _ = machine.messagesPolled(Self.messages(20, partition: 1))
        _ = machine.willRevoke([p1])
        _ = machine.didRevoke([p1])
        #expect(machine.isBackpressurePaused)
        #expect(machine.reconcilePauses().pause == [p0])
    }

    private static func messages(_ offsets: Range<Int64>, partition: Int32) -> [KafkaConsumerMessage] {
        offsets.map { KafkaConsumerMessage(topic: "t", partition: partition, offset: $0, key: nil, value: [], headers: [], timestamp: nil) }
    }

    @Test("a partition whose fetching starts past its committed offset is sent back, and nothing skipped is handed out")
    func skippedStartIsSentBack() {
        var machine = KafkaConsumer.StateMachine(maxBuffered: 100)
        let p0 = KafkaTopicPartition(topic: "t", partition: 0)
        machine.didAssign([p0], starts: [p0: 5])
        let wakeups = machine.messagesPolled(Self.messages(8..<12, partition: 0))
        #expect(wakeups.seeks == [KafkaTopicPartitionOffset(p0, offset: 5)])
        #expect(machine.skipsRepaired == 1)
        // Polled before the seek took effect: dropped, and no second seek asked for.
        #expect(machine.messagesPolled(Self.messages(12..<14, partition: 0)).seeks.isEmpty)
        machine.didSeek(wakeups.seeks)
        _ = machine.messagesPolled(Self.messages(5..<9, partition: 0))
        var offsets: [Int64] = []
        while case .deliver(let message, _) = machine.next(waiter: nil) { offsets.append(message.offset) }
        #expect(offsets == [5, 6, 7, 8])
    }
}

@Suite("Fetch position")
struct FetchPositionTests {
    @Test("idle partitions of quiet topics are parked and unparked; others, paused ones and revoked ones never are")
    func parking() throws {
        var machine = KafkaConsumer.StateMachine(maxBuffered: 100, quietTopics: ["t.retry.1"])
        let busy = KafkaTopicPartition(topic: "t", partition: 0)
        let q0 = KafkaTopicPartition(topic: "t.retry.1", partition: 0), q1 = KafkaTopicPartition(topic: "t.retry.1", partition: 1)
        machine.didAssign([busy, q0, q1], starts: [q0: 7])
        let candidates = machine.parkingCandidates().sorted { $0.partition.partition < $1.partition.partition }
        #expect(candidates.map(\.partition) == [q0, q1])
        #expect(candidates.map(\.next) == [7, nil])

        machine.park([q0, q1, KafkaTopicPartition(topic: "t.retry.1", partition: 9)])  // not assigned: ignored
        #expect(machine.parked == [q0, q1])
        #expect(machine.reconcilePauses().pause == [q0, q1])
        #expect(machine.parkingCandidates().isEmpty)

        // An application pause outlives a probe; the probe resumes only what parking paused.
        _ = try machine.pause([q1]).get()
        machine.unparkAll()
        let probe = machine.reconcilePauses()
        #expect(probe.resume == [q0] && probe.pause.isEmpty)
        #expect(machine.parkingCandidates().map(\.partition) == [q0])

        // A revoked partition leaves the parked set with its assignment.
        machine.park([q0])
        _ = machine.willRevoke([q0])
        #expect(machine.parked.isEmpty)
        _ = machine.didRevoke([q0])
        machine.didAssign([q0])
        #expect(machine.parked.isEmpty)
        #expect(machine.reconcilePauses().pause.isEmpty)
    }

    @Test("parking alternates: judged after each probe window, probed after each interval")
    func parkingSchedule() {
        let start = ContinuousClock.now
        var parking = QuietPartitionParking(interval: .seconds(1), window: .milliseconds(100), now: start)
        #expect(parking.step(at: start) == nil)
        #expect(parking.step(at: start + .milliseconds(100)) == .judge)
        #expect(parking.step(at: start + .milliseconds(600)) == nil)
        #expect(parking.step(at: start + .milliseconds(1_100)) == .probe)
        #expect(parking.step(at: start + .milliseconds(1_150)) == nil)
        #expect(parking.step(at: start + .milliseconds(1_200)) == .judge)
    }

    @Test("a skip mid-stream asks for one seek; a re-delivery is dropped")
    func skipAndReplay() {
        var position = FetchPosition()
        #expect(position.accept(10) == .accept)  // unknown start: the first message sets it
        #expect(position.accept(11) == .accept)
        #expect(position.accept(11) == .drop)    // polled twice
        #expect(position.accept(15) == .seek(12))
        #expect(position.accept(16) == .drop)    // before the seek took effect
        position.seekPerformed()
        #expect(position.accept(12) == .accept)
        #expect(position.accept(13) == .accept)
    }

    @Test("a gap still there after the seek is real (transaction markers, compaction) and accepted, as are later ones")
    func realGap() {
        var position = FetchPosition(next: 3)
        #expect(position.accept(7) == .seek(3))
        position.seekPerformed()
        #expect(position.accept(7) == .accept)
        #expect(position.accept(9) == .accept)  // a topic with real gaps is not sent back at every one
    }

    @Test("a failed seek is asked for again by the next message past the position")
    func failedSeek() {
        var position = FetchPosition(next: 3)
        #expect(position.accept(5) == .seek(3))
        position.seekFailed()
        #expect(position.accept(6) == .seek(3))
    }
}
