import Kafka
import Testing

@Suite("Fault injection on the mock cluster", .timeLimit(.minutes(1)))
struct FaultInjectionTests {
    @Test("an idempotent producer delivers everything once through a broker outage and request errors")
    func producerSurvivesFaults() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("faults")
        try cluster.createTopic(name: topic, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll(makeMessages(50, topic: topic, partitions: 2))

        // Outage: the sends are in flight while the broker is down and complete after it is back.
        cluster.setBrokerDown(1)
        let duringOutage = Task { try await producer.sendAll(makeMessages(100, topic: topic, partitions: 2, offset: 50)) }
        try await Task.sleep(for: .seconds(1))  // the length of the outage, not a synchronisation point
        cluster.setBrokerUp(1)
        #expect(try await duringOutage.value.count == 100)

        // Retriable errors on Produce requests are retried transparently.
        cluster.pushRequestErrors(
            apiKey: KafkaMockCluster.ApiKey.produce,
            errors: [.notLeaderForPartition, .notEnoughReplicas, .requestTimedOut, .leaderNotAvailable])
        cluster.setBrokerRoundTripTime(1, .milliseconds(20))
        let afterErrors = try await producer.sendAll(makeMessages(100, topic: topic, partitions: 2, offset: 150))
        #expect(afterErrors.count == 100)
        cluster.clearRequestErrors(apiKey: KafkaMockCluster.ApiKey.produce)
        cluster.setBrokerRoundTripTime(1, .zero)

        // Every message is in the log exactly once, in order per partition.
        let consumer = try KafkaConsumer(
            configuration: .test(
                cluster.bootstrapServers,
                partitions: [.beginning(topic: topic, partition: 0), .beginning(topic: topic, partition: 1)]))
        for partition in Int32(0)..<2 {
            let marks = try await consumer.watermarks(topic: topic, partition: partition)
            #expect(marks.low == 0 && marks.high == 125, "partition \(partition): \(marks)")
        }
        let all = try await take(250, from: consumer)
        let keys = all.map { String(decoding: $0.key ?? [], as: UTF8.self) }
        #expect(Set(keys).count == 250)
        for partition in Int32(0)..<2 {
            let ordered = all.filter { $0.partition == partition }.map { Int(String(decoding: $0.value.dropFirst(), as: UTF8.self))! }
            #expect(ordered == ordered.sorted(), "partition \(partition) out of order")
        }
        await consumer.close()
        await producer.close()
    }

    @Test("messages discarded while the broker is down are never written, and the producer goes on")
    func discardedMessagesNeverLand() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("discard")
        try cluster.createTopic(name: topic, partitions: 1)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll(makeMessages(10, topic: topic, partitions: 1))

        cluster.setBrokerDown(1)
        let stranded = Task { try await producer.sendAll(makeMessages(20, topic: topic, partitions: 1, offset: 10)) }
        // Discarding before the sends reached librdkafka would discard nothing: wait until they are queued.
        while producer.outstandingCount < 20 { try await Task.sleep(for: .milliseconds(5)) }
        try producer.discardUnsent()
        await #expect(throws: KafkaError.self) { try await stranded.value }
        cluster.setBrokerUp(1)

        // The idempotent producer is still usable, and only what was not discarded is in the log.
        let after = try await producer.sendAll(makeMessages(5, topic: topic, partitions: 1, offset: 30))
        #expect(after.map(\.offset) == Array(10..<15))
        let consumer = try KafkaConsumer(configuration: .test(cluster.bootstrapServers,
                                                              partitions: [.beginning(topic: topic, partition: 0)]))
        let marks = try await consumer.watermarks(topic: topic, partition: 0)
        #expect(marks.high == 15)
        await consumer.close()
        await producer.close()
    }
}
