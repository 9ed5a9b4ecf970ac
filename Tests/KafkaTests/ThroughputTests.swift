import Foundation
import Kafka
import Testing

/// A quick throughput figure, not a regression test: run with
/// `KAFKA_BENCH=1 swift test -c release --filter Throughput`.
@Suite("Throughput on the mock cluster", .enabled(if: ProcessInfo.processInfo.environment["KAFKA_BENCH"] != nil))
struct ThroughputTests {
    @Test("produce and consume 100k 1 KB messages")
    func produceAndConsume() async throws {
        let count = 100_000
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("bench")
        try cluster.createTopic(name: topic, partitions: 4)
        var configuration = KafkaProducerConfiguration.test(cluster.bootstrapServers)
        configuration.linger = .milliseconds(5)
        let producer = try KafkaProducer(configuration: configuration)
        let payload = [UInt8](repeating: 0x61, count: 1024)
        let messages = (0..<count).map {
            KafkaProducerMessage(topic: topic, key: "key-\($0 % 1000)", value: payload, headers: [KafkaHeader(key: "n", string: String($0))])
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
        let consumer = try KafkaConsumer(
            configuration: .test(cluster.bootstrapServers, partitions: (0..<4).map { .beginning(topic: topic, partition: $0) }))
        let consumeTime = try await clock.measure {
            var received = 0
            for try await message in consumer.messages {
                try consumer.storeOffset(message)
                received += 1
                if received == 2 * count { break }
            }
        }
        func rate(_ duration: Duration) -> String {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return "\(Int(Double(count) / seconds)) msg/s (\(duration))"
        }
        print("THROUGHPUT sendAll 100k x 1KB: \(rate(batchTime))")
        print("THROUGHPUT send (5k in flight) 100k x 1KB: \(rate(sendTime))")
        print("THROUGHPUT consume+storeOffset 200k x 1KB: \(rate(consumeTime / 2))")
        await consumer.close()
        await producer.close()
    }
}
