import Foundation
import Testing
@testable import Pipeline

/// ``InMemoryTransport/deleteRecords(in:)`` behaves as Kafka's DeleteRecords up to the high
/// watermark: the records go, offsets do not restart, and readers see only what is kept.
@Suite(.timeLimit(.minutes(1)))
struct InMemoryRetentionTests {
    private func text(_ record: InboundRecord) -> String { String(decoding: record.value, as: UTF8.self) }

    /// Every record a fresh group of `topics` reads until the transport is idle.
    private func consumeAll(_ transport: InMemoryTransport, group: String, topics: [String]) async throws -> [InboundRecord] {
        var read: [InboundRecord] = []
        for try await event in transport.source(group: group, topics: topics, finishWhenIdle: true).events() {
            if case .records(let records) = event { read += records }
        }
        return read
    }

    @Test func deletedRecordsAreGoneAndOffsetsGoOn() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 2)
        for index in 0..<3 { transport.produce(topic: "t", key: nil, value: "old-\(index)") }
        transport.produce(topic: "other", key: nil, value: "kept")
        transport.deleteRecords(in: "t")

        #expect(transport.recordCount(in: "t") == 0)
        #expect(transport.records(in: "t").isEmpty)
        #expect(transport.endOffset(of: "t", partition: 0) == 3, "the high watermark stays")
        #expect(transport.records(in: "other").map(text) == ["kept"], "other topics keep their records")

        let next = transport.produce(topic: "t", key: nil, value: "new")
        #expect(next.offset == 3)
        #expect(transport.records(in: "t", partition: 0).map(\.offset) == [3])
        #expect(transport.records(in: "t").map(text) == ["new"])

        let read = try await consumeAll(transport, group: "g", topics: ["t"])
        #expect(read.map(text) == ["new"], "a new group starts at the log start")
        #expect(read.map(\.offset) == [3])
    }

    @Test func aGroupPositionedBeforeTheLogStartResumesAtIt() async throws {
        let transport = InMemoryTransport()
        for index in 0..<4 { transport.produce(topic: "t", key: nil, value: "r\(index)") }
        let first = try await consumeAll(transport, group: "g", topics: ["t"])
        #expect(first.count == 4)
        _ = await transport.source(group: "g", topics: ["t"]).storeOffsets([first[0].position])
        transport.deleteRecords(in: "t")
        transport.produce(topic: "t", key: nil, value: "r4")

        let resumed = try await consumeAll(transport, group: "g", topics: ["t"])
        #expect(resumed.map(\.offset) == [4], "offsets 1 to 3 were deleted; the group skips to what is kept")
    }

    @Test func theDeadLetterReaderSeesOnlyKeptRecordsAtTheirOffsets() async throws {
        let transport = InMemoryTransport()
        let topic = Topics().deadLetter
        for index in 0..<2 { transport.produce(topic: topic, key: nil, value: "gone-\(index)") }
        transport.deleteRecords(in: topic)
        for index in 0..<2 { transport.produce(topic: topic, key: nil, value: "kept-\(index)") }

        let reader = InMemoryDeadLetterReader(transport: transport, topic: topic)
        let ranges = try await reader.open(partition: nil, fromOffset: nil, toOffset: nil)
        #expect(ranges.map(\.end) == [4])
        var read: [InboundRecord] = []
        for try await record in reader.records() { read.append(record) }
        #expect(read.map(text) == ["kept-0", "kept-1"])
        #expect(read.map(\.offset) == [2, 3])

        let bounded = try await reader.open(partition: 0, fromOffset: 3, toOffset: 3)
        #expect(bounded.map(\.start) == [3])
        var one: [InboundRecord] = []
        for try await record in reader.records() { one.append(record) }
        #expect(one.map(text) == ["kept-1"])
    }
}
