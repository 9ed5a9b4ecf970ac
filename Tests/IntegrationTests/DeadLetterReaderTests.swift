import Foundation
import Kafka
import Pipeline
import Testing

/// `KafkaDeadLetterReader`'s idle watchdog: a read whose broker goes away ends with a stall
/// within the idle timeout, and a replay that takes its time between records (its rate limit) is
/// not a stall.
@Suite(.timeLimit(.minutes(2))) struct DeadLetterReaderTests {
    private static func topicWithRecords(_ count: Int) async throws -> BrokerFixture {
        let fixture = try BrokerFixture()
        try fixture.cluster.createTopic(name: "letters", partitions: 1)
        let producer = try fixture.producer()
        // One send each: several produced batches, so the read takes several fetches.
        for index in 0..<count {
            _ = try await producer.send(KafkaProducerMessage(topic: "letters", partition: 0, value: Array("\(index)".utf8)))
        }
        await producer.close()
        return fixture
    }

    @Test func aReadWhoseBrokerGoesAwayThrowsWithinTheIdleTimeout() async throws {
        let fixture = try await Self.topicWithRecords(200)
        let reader = KafkaDeadLetterReader(bootstrapServers: fixture.bootstrap, properties: BrokerFixture.fetchOneAhead,
                                           topic: "letters", idleTimeout: .seconds(2))
        _ = try await reader.open(partition: nil, fromOffset: nil, toOffset: nil)
        try await fixture.expectStall(KafkaDeadLetterReader.StalledError.self, idleTimeout: .seconds(2), records: 200) { onRecord in
            for try await _ in reader.records() { onRecord() }
        }
        await reader.close()
    }

    @Test func timeBetweenRecordsIsNotAStall() async throws {
        let fixture = try await Self.topicWithRecords(5)
        let reader = KafkaDeadLetterReader(bootstrapServers: fixture.bootstrap, topic: "letters", idleTimeout: .seconds(1))
        _ = try await reader.open(partition: nil, fromOffset: nil, toOffset: nil)
        var values: [String] = []
        for try await record in reader.records() {
            values.append(String(decoding: record.value, as: UTF8.self))
            // A replay waiting out its rate limit: longer than the idle timeout, while the watchdog runs.
            if values.count == 2 { try await Task.sleep(for: .seconds(2)) }
        }
        await reader.close()
        #expect(values == ["0", "1", "2", "3", "4"])
    }
}
