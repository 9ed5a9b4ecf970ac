import Kafka
import Testing

/// ``KafkaConsumerConfiguration/onPartitionsAssigned`` runs on the poll thread before any message
/// of the partitions it names is handed out, so an application can order "assigned" with the
/// messages (what `KafkaRecordSource` relies on).
@Suite("The assign hook", .timeLimit(.minutes(1)))
struct AssignHookTests {
    @Test("a group member hears of its partitions before their first message")
    func groupAssignmentPrecedesMessages() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("assign")
        try cluster.createTopic(name: topic, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll(makeMessages(10, topic: topic, partitions: 2))
        let log = Locked<[String]>([])
        var configuration = KafkaConsumerConfiguration.test(cluster.bootstrapServers, group: uniqueTopic("g"), topics: [topic])
        configuration.onPartitionsAssigned = { partitions, generation in
            log.withLock { $0.append("assigned \(partitions.count) as \(generation)") }
        }
        let consumer = try KafkaConsumer(configuration: configuration)
        let messages = try await take(10, from: consumer)
        for message in messages {
            log.withLock { $0.append("message \(message.partition)") }
        }
        // One generation for the whole assignment, carried by every message fetched under it.
        let generation = try #require(messages.first?.assignmentGeneration)
        #expect(generation > 0 && messages.allSatisfy { $0.assignmentGeneration == generation })
        #expect(log.value.first == "assigned 2 as \(generation)")
        #expect(log.value.filter { $0.hasPrefix("assigned") }.count == 1)
        await consumer.close()
        await producer.close()
    }

    @Test("an explicit assignment calls the hook from init")
    func explicitAssignmentCallsTheHook() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("assign")
        try cluster.createTopic(name: topic, partitions: 1)
        let assigned = Locked<[KafkaTopicPartition]>([])
        var configuration = KafkaConsumerConfiguration.test(cluster.bootstrapServers,
                                                            partitions: [.beginning(topic: topic, partition: 0)])
        configuration.onPartitionsAssigned = { partitions, _ in assigned.withLock { $0 += partitions } }
        let consumer = try KafkaConsumer(configuration: configuration)
        #expect(assigned.value == [KafkaTopicPartition(topic: topic, partition: 0)])
        await consumer.close()
    }
}
