import Kafka
import Testing

@Suite("Mock cluster and stable bootstrap port", .timeLimit(.minutes(1)))
struct MockClusterTests {
    @Test("clients that only know the stable address produce and consume")
    func stableBootstrapAddress() async throws {
        let cluster = try KafkaMockCluster(brokerCount: 2)
        let stable = try cluster.listen(bootstrapPort: 0)
        #expect(cluster.stableBootstrapServers == stable)
        #expect(stable.hasPrefix("127.0.0.1:") && !cluster.bootstrapServers.contains(stable))
        #expect(throws: KafkaError.self) { try cluster.listen(bootstrapPort: 0) }

        let topic = uniqueTopic("stable")
        try cluster.createTopic(name: topic, partitions: 2, replicationFactor: 2)
        let producer = try KafkaProducer(configuration: .test(stable))
        let reports = try await producer.sendAll(makeMessages(20, topic: topic, partitions: 2))
        #expect(reports.count == 20)

        let consumer = try KafkaConsumer(
            configuration: .test(stable, partitions: [.beginning(topic: topic, partition: 0), .beginning(topic: topic, partition: 1)]))
        let received = try await take(20, from: consumer)
        #expect(Set(received.map(\.key)).count == 20)

        let admin = try KafkaAdminClient(bootstrapServers: [stable])
        let created = uniqueTopic("created")
        try await admin.createTopics([KafkaTopicSpecification(name: created, partitions: 5)])
        #expect(try await admin.partitionCount(topic: created) == 5)

        await consumer.close()
        await producer.close()
        cluster.close()
        cluster.close()
        #expect(throws: KafkaError.self) { try cluster.createTopic(name: "after-close") }
    }

    @Test("an occupied port is reported, not ignored")
    func occupiedPort() throws {
        let first = try KafkaMockCluster()
        let address = try first.listen(bootstrapPort: 0)
        let port = try #require(UInt16(address.split(separator: ":").last!))
        let second = try KafkaMockCluster()
        #expect(throws: KafkaError.self) { try second.listen(bootstrapPort: port) }
        first.close()
        second.close()
    }
}
