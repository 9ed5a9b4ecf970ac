import Foundation
@_spi(Testing) import Kafka
import Testing

/// A quick throughput figure, not a regression test: run with
/// `KAFKA_BENCH=1 swift test -c release --filter Throughput`.
///
/// The mock cluster keeps only a few MB per partition (older message sets are dropped), so the
/// 200 MB written here is spread over 64 partitions to keep all of it readable.
@Suite("Throughput on the mock cluster", .enabled(if: ProcessInfo.processInfo.environment["KAFKA_BENCH"] != nil))
struct ThroughputTests {
    @Test("produce and consume 100k 1 KB messages")
    func produceAndConsume() async throws {
        let count = Int(ProcessInfo.processInfo.environment["KAFKA_BENCH_COUNT"] ?? "") ?? 100_000
        let partitions: Int32 = 64
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("bench")
        try cluster.createTopic(name: topic, partitions: Int(partitions))
        var configuration = KafkaProducerConfiguration.test(cluster.bootstrapServers)
        configuration.linger = .milliseconds(5)
        let producer = try KafkaProducer(configuration: configuration)
        let payload = [UInt8](repeating: 0x61, count: 1024)
        let messages = (0..<count).map {
            KafkaProducerMessage(
                topic: topic, key: "key-\($0 % 1000)", value: payload, headers: [KafkaHeader(key: "n", string: String($0))])
        }
        let clock = ContinuousClock()

        let batchTime = try await clock.measure {
            for chunk in stride(from: 0, to: count, by: 10_000) {
                _ = try await producer.sendAll(Array(messages[chunk..<min(chunk + 10_000, count)]))
            }
        }
        // One task per message, 5000 in flight at a time: the per-message `send` path.
        let sendTime = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, message) in messages.enumerated() {
                    if index >= 5_000 { try await group.next() }
                    group.addTask { _ = try await producer.send(message) }
                }
                try await group.waitForAll()
            }
        }
        var consumerConfiguration = KafkaConsumerConfiguration.test(
            cluster.bootstrapServers, partitions: (0..<partitions).map { .beginning(topic: topic, partition: $0) })
        if let limit = ProcessInfo.processInfo.environment["KAFKA_BENCH_BUFFER"].flatMap(Int.init) {
            consumerConfiguration.maxBufferedMessages = limit
        }
        for pair in (ProcessInfo.processInfo.environment["KAFKA_BENCH_PROPS"] ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { consumerConfiguration.additionalProperties[parts[0]] = parts[1] }
        }
        let consumer = try KafkaConsumer(configuration: consumerConfiguration)
        let consumeTime = try await clock.measure {
            var received = 0
            for try await message in consumer.messages {
                try consumer.storeOffset(message)
                received += 1
                if received == 2 * count { break }
            }
        }
        func rate(_ messages: Int, _ duration: Duration) -> String {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return "\(Int(Double(messages) / seconds)) msg/s, \(Int(Double(messages) / seconds / 1024)) MB/s (\(duration))"
        }
        print("THROUGHPUT sendAll \(count) x 1 KB: \(rate(count, batchTime))")
        print("THROUGHPUT send, 5000 in flight, \(count) x 1 KB: \(rate(count, sendTime))")
        print(
            "THROUGHPUT consume + storeOffset \(2 * count) x 1 KB: \(rate(2 * count, consumeTime)),",
            "maxBufferedMessages \(consumerConfiguration.maxBufferedMessages), \(consumer.backpressurePauseCount) backpressure pauses")
        await consumer.close()
        await producer.close()
    }
}
