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
}
