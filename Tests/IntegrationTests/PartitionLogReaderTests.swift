import Foundation
import Kafka
import Pipeline
import Testing

/// `KafkaPartitionLogReader`, which rebuilds fulfil's ledger and the owner view on assignment:
/// every record up to the high watermarks of the call's start, in offset order per partition,
/// and a stall reported within the idle timeout instead of a wait without end.
@Suite(.timeLimit(.minutes(2))) struct PartitionLogReaderTests {
    @Test func readsEachPartitionInOrderUpToTheHighWatermarkOfTheStart() async throws {
        let fixture = try BrokerFixture()
        try fixture.cluster.createTopic(name: "log", partitions: 3)
        let producer = try fixture.producer()
        // One send each: several produced batches per partition, so the read takes several fetches.
        for index in 0..<90 {
            _ = try await producer.send(KafkaProducerMessage(topic: "log", partition: Int32(index % 3), key: "k\(index)",
                                                             value: Array("\(index)".utf8)))
        }
        let reader = KafkaPartitionLogReader(bootstrapServers: fixture.bootstrap, idleTimeout: .seconds(10))
        var read: [Int32: [Int64]] = [:]
        var values: [String] = []
        try await reader.read(topic: "log", partitions: [0, 1, 2]) { record in
            read[record.partition, default: []].append(record.offset)
            values.append(String(decoding: record.value, as: UTF8.self))
        }
        for partition: Int32 in 0..<3 { #expect(read[partition] == Array(0..<30)) }
        #expect(Set(values) == Set((0..<90).map(String.init)))
        // Records produced after the call began are the next call's: this one stopped at the ends it queried.
        _ = try await producer.send(KafkaProducerMessage(topic: "log", partition: 0, value: Array("late".utf8)))
        var again = 0
        try await reader.read(topic: "log", partitions: [0]) { _ in again += 1 }
        #expect(again == 31)
        await producer.close()
    }

    @Test func aReadThatStopsReceivingRecordsThrowsWithinTheIdleTimeout() async throws {
        let fixture = try BrokerFixture()
        try fixture.cluster.createTopic(name: "log", partitions: 1)
        let producer = try fixture.producer()
        for index in 0..<200 {
            _ = try await producer.send(KafkaProducerMessage(topic: "log", partition: 0, value: Array("\(index)".utf8)))
        }
        await producer.close()
        let reader = KafkaPartitionLogReader(bootstrapServers: fixture.bootstrap, properties: BrokerFixture.fetchOneAhead,
                                             idleTimeout: .seconds(2))
        try await fixture.expectStall(KafkaPartitionLogReader.StalledError.self, idleTimeout: .seconds(2), records: 200) { onRecord in
            try await reader.read(topic: "log", partitions: [0]) { _ in onRecord() }
        }
    }
}
