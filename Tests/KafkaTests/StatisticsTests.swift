import Kafka
import Testing

@Suite("librdkafka statistics", .timeLimit(.minutes(1)))
struct StatisticsTests {
    @Test("a group consumer reports its group's join state, the broker and each assigned partition's lag")
    func groupConsumerReportsLag() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("stats")
        try cluster.createTopic(name: topic, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll(makeMessages(10, topic: topic, partitions: 2))
        var configuration = KafkaConsumerConfiguration.test(cluster.bootstrapServers, group: uniqueTopic("group"), topics: [topic])
        configuration.statisticsInterval = .milliseconds(100)
        let (reports, continuation) = AsyncStream.makeStream(of: KafkaStatistics.self, bufferingPolicy: .bufferingNewest(1))
        configuration.onStatistics = { continuation.yield($0) }
        let consumer = try KafkaConsumer(configuration: configuration)
        // Take the messages without storing offsets: nothing is committed, so the lag is all that was produced.
        _ = try await take(10, from: consumer)
        let report = try await withDeadline(.seconds(20), "a steady report with lag for both partitions") {
            for await report in reports {
                let partitions = report.topics[topic]?.partitions ?? [:]
                if report.consumerGroup?.joinState == "steady", partitions.count == 2,
                   partitions.values.allSatisfy({ $0.lag != nil }) {
                    return report
                }
            }
            throw DeadlineExceeded(what: "statistics stream ended")
        }
        #expect(report.type == "consumer")
        #expect(report.hasBrokerUp)
        #expect(report.consumerGroup?.assignmentSize == 2)
        #expect(report.consumerGroup!.rebalanceCount >= 1)
        #expect(report.topics[topic]!.partitions.values.compactMap(\.lag).reduce(0, +) == 10)
        await consumer.close()
        await producer.close()
    }

    @Test("a producer reports its queue and its brokers")
    func producerReportsItsQueue() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("pstats")
        try cluster.createTopic(name: topic, partitions: 1)
        var configuration = KafkaProducerConfiguration.test(cluster.bootstrapServers)
        configuration.statisticsInterval = .milliseconds(100)
        let (reports, continuation) = AsyncStream.makeStream(of: KafkaStatistics.self, bufferingPolicy: .bufferingNewest(1))
        configuration.onStatistics = { continuation.yield($0) }
        let producer = try KafkaProducer(configuration: configuration)
        _ = try await producer.sendAll(makeMessages(5, topic: topic, partitions: 1))
        // Every message was acknowledged by sendAll: a report soon shows the queue empty.
        let report = try await withDeadline(.seconds(20), "a producer report with a broker up and an empty queue") {
            for await report in reports where report.hasBrokerUp && report.messageCount == 0 { return report }
            throw DeadlineExceeded(what: "statistics stream ended")
        }
        #expect(report.type == "producer")
        #expect(!report.brokers.isEmpty)
        await producer.close()
    }

    @Test func statisticsIntervalIsValidatedAndReserved() {
        var configuration = KafkaConsumerConfiguration.test("127.0.0.1:1", group: "g", topics: ["t"])
        configuration.statisticsInterval = .milliseconds(0)
        configuration.onStatistics = { _ in }
        #expect(throws: KafkaError.self) { try configuration.validate() }
        configuration.statisticsInterval = nil
        configuration.additionalProperties = ["statistics.interval.ms": "1000"]
        #expect(throws: KafkaError.self) { try configuration.validate() }
    }
}
