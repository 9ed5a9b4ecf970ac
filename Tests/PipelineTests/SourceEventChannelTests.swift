import Foundation
import Pipeline
import Synchronization
import Testing

/// A counter tasks can share (an `Atomic` cannot be captured by an escaping closure).
private final class Counter: Sendable {
    let value = Atomic<Int>(0)
    var current: Int { value.load(ordering: .relaxed) }
}

@Suite("SourceEventChannel: bounded, ordered hand-off from a source to its runner")
struct SourceEventChannelTests {
    private func record(_ offset: Int64, partition: Int32 = 0) -> InboundRecord {
        InboundRecord(topic: "t", partition: partition, offset: offset, key: nil, value: [], timestamp: Date())
    }

    private func offsets(_ events: [SourceEvent]) -> [String] {
        events.flatMap { event in
            switch event {
            case .records(let records): records.map { "r\($0.offset)" }
            case .assigned: ["assigned"]
            case .revoked: ["revoked"]
            }
        }
    }

    @Test("records and control events come out in the order they went in; control events ignore the capacity")
    func orderAndControlEvents() async {
        let channel = SourceEventChannel(capacity: 2)
        channel.yieldControl(.assigned([TopicPartition(topic: "t", partition: 0)], epoch: AssignmentEpoch(1)))
        #expect(await channel.send(record(0)))
        #expect(await channel.send(record(1)))
        // Full of records, yet a revocation still goes in at once (the poll thread must not wait).
        channel.yieldControl(.revoked(PartitionRevocation(partitions: [TopicPartition(topic: "t", partition: 0)], onAcknowledge: {})))
        channel.finish()
        var received: [SourceEvent] = []
        for await event in channel { received.append(event) }
        #expect(offsets(received) == ["assigned", "r0", "r1", "revoked"])
        #expect(received.count == 3, "the records queued together come as one event")
    }

    @Test("a sender waits while the channel holds `capacity` records and goes on when one is taken")
    func sendWaitsWhenFull() async {
        let channel = SourceEventChannel(capacity: 2)
        let sent = Counter()
        let sender = Task {
            for offset in Int64(0)..<5 {
                await channel.send(record(offset))
                sent.value.add(1, ordering: .relaxed)
            }
            channel.finish()
        }
        // The sender fills the channel and then must stop: it cannot finish before anything is read.
        while sent.current < 2 { await Task.yield() }
        for _ in 0..<100 { await Task.yield() }
        #expect(sent.current == 2)
        var iterator = channel.makeAsyncIterator()
        var received: [SourceEvent] = []
        while let event = await iterator.next() { received.append(event) }
        await sender.value
        #expect(offsets(received) == ["r0", "r1", "r2", "r3", "r4"])
    }

    @Test("a record its `admit` check refuses is not enqueued and the sender is told")
    func admitRefuses() async {
        let channel = SourceEventChannel(capacity: 4)
        #expect(await channel.send(record(0), if: { false }) == false)
        #expect(await channel.send(record(1)))
        channel.finish()
        var received: [SourceEvent] = []
        for await event in channel { received.append(event) }
        #expect(offsets(received) == ["r1"])
        #expect(await channel.send(record(2)) == false, "a finished channel takes nothing more")
    }

    @Test("cancelling the reading task ends its iteration, releases a waiting sender and runs the termination handler")
    func cancellationEndsIteration() async {
        let channel = SourceEventChannel(capacity: 1)
        let terminated = Counter()
        channel.onTermination { terminated.value.add(1, ordering: .relaxed) }
        #expect(await channel.send(record(0)))
        let blockedSender = Task { await channel.send(record(1)) }
        let reader = Task {
            var count = 0
            for await _ in channel { count += 1 }
            return count
        }
        // The reader takes r0 (and perhaps r1) and then waits on an empty channel; cancel it there.
        while reader.isCancelled == false, terminated.current == 0 {
            reader.cancel()
            await Task.yield()
        }
        let read = await reader.value
        #expect(read <= 2)
        #expect(terminated.current == 1, "the termination handler runs exactly once")
        _ = await blockedSender.value  // returns (true or false): it is not left waiting forever
    }

    @Test("a waiting sender whose record is refused (its partition was revoked) gets false at once; others keep waiting")
    func refuseWaitingSenders() async {
        let channel = SourceEventChannel(capacity: 1)
        #expect(await channel.send(record(0)))
        let revokedSender = Task { await channel.send(record(1, partition: 1)) }
        let keptSender = Task { await channel.send(record(2, partition: 2)) }
        while channel.waitingSenderCount < 2 { await Task.yield() }  // both parked on the full channel
        channel.refuseWaiting { $0.partition == 1 }
        #expect(await revokedSender.value == false)
        var iterator = channel.makeAsyncIterator()
        var offsets: [Int64] = []
        while offsets.count < 2, case .records(let records)? = await iterator.next() {
            offsets += records.map(\.offset)
        }
        #expect(await keptSender.value == true)
        #expect(offsets == [0, 2])
    }

    @Test("records sent together reach a waiting receiver as one event")
    func batchReachesWaitingReceiverWhole() async {
        let channel = SourceEventChannel(capacity: 8)
        let reader = Task {
            var iterator = channel.makeAsyncIterator()
            return await iterator.next()
        }
        while !channel.receiverIsWaiting { await Task.yield() }
        #expect(await channel.send(contentsOf: (0..<3).map { record($0) }) == 3)
        guard case .records(let records)? = await reader.value else {
            Issue.record("expected records")
            return
        }
        #expect(records.map(\.offset) == [0, 1, 2], "one wake-up for the batch, not one for its first record")
    }

    @Test("a batch larger than the room goes in as room appears, in order; records `admit` refuses are dropped")
    func batchWaitsForRoomAndDropsRefused() async {
        let channel = SourceEventChannel(capacity: 2)
        let sender = Task {
            let enqueued = await channel.send(contentsOf: (0..<6).map { record($0) }, admitting: { $0.filter { $0.offset != 3 } })
            channel.finish()
            return enqueued
        }
        while channel.waitingSenderCount < 1 { await Task.yield() }  // r0 and r1 in, waiting with r2
        var received: [SourceEvent] = []
        for await event in channel { received.append(event) }
        #expect(offsets(received) == ["r0", "r1", "r2", "r4", "r5"])
        #expect(await sender.value == 5)
    }

    @Test("a batch waiting with a record whose partition is revoked drops that partition's records and goes on")
    func batchRefusedWhileWaiting() async {
        let channel = SourceEventChannel(capacity: 1)
        let revoked = Counter()  // 1 once partition 1 is revoked
        #expect(await channel.send(record(0)))
        let sender = Task {
            await channel.send(contentsOf: [record(1, partition: 1), record(2, partition: 2), record(3, partition: 1)],
                               admitting: { candidates in candidates.filter { $0.partition != 1 || revoked.current == 0 } })
        }
        while channel.waitingSenderCount < 1 { await Task.yield() }
        revoked.value.store(1, ordering: .relaxed)
        channel.refuseWaiting { $0.partition == 1 }
        var iterator = channel.makeAsyncIterator()
        var offsets: [Int64] = []
        while offsets.count < 2, case .records(let records)? = await iterator.next() { offsets += records.map(\.offset) }
        #expect(offsets == [0, 2])
        #expect(await sender.value == 1)
    }
}
