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

    /// Fetch errors while a group member reads a topic that is still being written (the chaos
    /// run injects NOT_LEADER_FOR_PARTITION on Fetch): every offset still arrives, none skipped.
    @Test("a consumer skips no offset through Fetch request errors", arguments: [false, true])
    func consumerSkipsNothingThroughFetchErrors(backpressure: Bool) async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("fetch-errors")
        let partitions: Int32 = 4
        try cluster.createTopic(name: topic, partitions: Int(partitions))
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        var configuration = KafkaConsumerConfiguration.test(cluster.bootstrapServers, group: uniqueTopic("g"), topics: [topic])
        configuration.additionalProperties["fetch.wait.max.ms"] = "10"
        if backpressure { configuration.maxBufferedMessages = 16 }
        let consumer = try KafkaConsumer(configuration: configuration)
        let total = 4000
        let reader = Task { () throws -> [Int32: [Int64]] in
            var offsets: [Int32: [Int64]] = [:]
            var count = 0
            for try await message in consumer.messages {
                offsets[message.partition, default: []].append(message.offset)
                count += 1
                if backpressure, count % 50 == 0 { try await Task.sleep(for: .milliseconds(2)) }  // a slow application
                if count == total { break }
            }
            return offsets
        }
        for batch in 0..<20 {
            _ = try await producer.sendAll(makeMessages(total / 20, topic: topic, partitions: partitions, offset: batch * total / 20))
            if batch % 4 == 2 {
                cluster.pushRequestErrors(apiKey: KafkaMockCluster.ApiKey.fetch,
                                          errors: [.notLeaderForPartition, .notLeaderForPartition, .notLeaderForPartition])
            }
        }
        let offsets = try await withDeadline(.seconds(60), "reading every offset") { try await reader.value }
        for partition in 0..<partitions {
            let got = offsets[partition] ?? []
            #expect(got == Array(0..<Int64(total / Int(partitions))), "partition \(partition): \(got.count) offsets, first gap after \(zip(got, got.dropFirst()).first { $1 != $0 + 1 }.map { "\($0.0)->\($0.1)" } ?? "none")")
        }
        await consumer.close()
        await producer.close()
    }

    /// Produce errors while many sends are in flight (the chaos run injects NOT_LEADER and
    /// REQUEST_TIMED_OUT on Produce): every acknowledged message is in the log, once.
    @Test("every acknowledged message is written once through Produce request errors")
    func acknowledgedMessagesLandThroughProduceErrors() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("produce-errors")
        let partitions: Int32 = 4
        try cluster.createTopic(name: topic, partitions: Int(partitions))
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        cluster.setBrokerRoundTripTime(1, .milliseconds(30))  // several requests in flight per partition
        let total = 8000, senders = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for chunk in 0..<(total / senders / 10) {
                        let start = (sender * (total / senders)) + chunk * 10
                        _ = try await producer.sendAll(makeMessages(10, topic: topic, partitions: partitions, offset: start))
                    }
                }
            }
            for _ in 0..<6 {
                try await Task.sleep(for: .milliseconds(30))
                cluster.pushRequestErrors(apiKey: KafkaMockCluster.ApiKey.produce,
                                          errors: [.notLeaderForPartition, .notLeaderForPartition, .notLeaderForPartition,
                                                   .requestTimedOut, .requestTimedOut])
            }
            try await group.waitForAll()
        }
        let consumer = try KafkaConsumer(configuration: .test(cluster.bootstrapServers,
                                                              partitions: (0..<partitions).map { .beginning(topic: topic, partition: $0) }))
        let all = try await take(total, from: consumer)
        let keys = all.map { String(decoding: $0.key ?? [], as: UTF8.self) }
        #expect(Set(keys).count == total)
        for partition in 0..<partitions {
            let marks = try await consumer.watermarks(topic: topic, partition: partition)
            #expect(marks.high == Int64(total / Int(partitions)), "partition \(partition): \(marks)")
        }
        await consumer.close()
        await producer.close()
    }
}
