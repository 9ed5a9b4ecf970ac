@_spi(Testing) import Kafka
import Testing

@Suite("Consumer pause, resume and backpressure", .timeLimit(.minutes(1)))
struct ConsumerFlowControlTests {
    @Test("no messages of a paused partition until it is resumed")
    func pauseAndResume() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("pause")
        try cluster.createTopic(name: topic, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll(makeMessages(20, topic: topic, partitions: 1))  // all on partition 0

        let consumer = try KafkaConsumer(
            configuration: .test(
                cluster.bootstrapServers,
                partitions: [.beginning(topic: topic, partition: 0), .beginning(topic: topic, partition: 1)]))
        let p0 = KafkaTopicPartition(topic: topic, partition: 0)
        let p1 = KafkaTopicPartition(topic: topic, partition: 1)

        // Pause right after the first message: the 19 already fetched are held back too.
        let first = try await take(1, from: consumer)
        #expect(first.map(\.offset) == [0])
        try consumer.pause([p0])
        try await expectNoMessage(from: consumer, within: .milliseconds(500))

        // The other partition keeps flowing while p0 is paused.
        _ = try await producer.sendAll(
            (0..<5).map { KafkaProducerMessage(topic: topic, partition: 1, key: "p1-\($0)", value: [UInt8($0)]) })
        let other = try await take(5, from: consumer)
        #expect(other.allSatisfy { $0.partition == 1 })
        _ = try await producer.sendAll(
            (0..<5).map { KafkaProducerMessage(topic: topic, partition: 0, key: "late-\($0)", value: [UInt8($0)]) })
        try await expectNoMessage(from: consumer, within: .milliseconds(500))

        // After resume every p0 message arrives once, in order, nothing lost.
        try consumer.resume([p0])
        let rest = try await take(24, from: consumer)
        #expect(rest.map(\.offset) == Array(1..<25))
        #expect(rest.allSatisfy { $0.partition == 0 })

        // Pausing something not assigned is a clear error, not a crash.
        let stranger = KafkaTopicPartition(topic: topic, partition: 7)
        #expect(throws: KafkaError.self) { try consumer.pause([stranger]) }
        do {
            try consumer.pause([p1, stranger])
        } catch let error as KafkaError {
            #expect(error.code == .partitionNotAssigned)
        }
        // So is storing an offset for a partition this consumer does not own.
        var foreign = rest[0]
        foreign.partition = 7
        do {
            try consumer.storeOffset(foreign)
            Issue.record("expected partitionNotAssigned")
        } catch let error as KafkaError {
            #expect(error.code == .partitionNotAssigned)
            #expect(error.message.contains("[7]"))
        }
        try consumer.storeOffset(rest[0])
        await consumer.close()
        await producer.close()
    }

    @Test("a slow reader gets everything through backpressure, without leaving the group")
    func backpressure() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("backpressure")
        try cluster.createTopic(name: topic, partitions: 1)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        let total = 300
        _ = try await producer.sendAll(makeMessages(total, topic: topic))

        var configuration = KafkaConsumerConfiguration.test(cluster.bootstrapServers, group: uniqueTopic("g"), topics: [topic])
        configuration.maxBufferedMessages = 10
        // The mock needs sessions longer than its 3 s initial join delay; librdkafka needs
        // max.poll.interval >= session timeout. The reader below takes longer than both.
        configuration.sessionTimeout = .seconds(4)
        configuration.maxPollInterval = .seconds(4)
        let consumer = try KafkaConsumer(configuration: configuration)
        let events = Locked<[String]>([])
        let watcher = Task {
            for await event in consumer.events {
                switch event {
                case .partitionsAssigned(let partitions): events.withLock { $0.append("assigned \(partitions)") }
                case .partitionsRevoked(let partitions): events.withLock { $0.append("revoked \(partitions)") }
                case .error(let error): events.withLock { $0.append("error \(error.code.name)") }
                }
            }
        }

        // ~20 ms per message: about 6 s of processing, longer than max.poll.interval.
        let received = try await withDeadline(.seconds(30), "slow reader") {
            var received: [Int64] = []
            for try await message in consumer.messages {
                try await Task.sleep(for: .milliseconds(20))
                try consumer.storeOffset(message)
                received.append(message.offset)
                if received.count == total { break }
            }
            return received
        }
        #expect(received == Array(0..<Int64(total)))
        #expect(consumer.backpressurePauseCount >= 1)
        let log = events.value
        #expect(!log.contains { $0.hasPrefix("revoked") }, "membership lost: \(log)")
        #expect(!log.contains { $0.contains("MAX_POLL") }, "\(log)")
        #expect(log.filter { $0.hasPrefix("assigned") }.count == 1, "\(log)")

        await consumer.close()
        _ = await watcher.value
        await producer.close()
    }
}

@Suite("Consumer parking of quiet topics", .timeLimit(.minutes(1)))
struct ConsumerParkingTests {
    @Test("a quiet topic's idle partitions are parked, a record written to one is still read, and the busy topic keeps flowing")
    func parkedPartitionsStillDeliver() async throws {
        let cluster = try KafkaMockCluster()
        let busy = uniqueTopic("busy"), quiet = uniqueTopic("busy-retry")
        try cluster.createTopic(name: busy, partitions: 1)
        try cluster.createTopic(name: quiet, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll([KafkaProducerMessage(topic: quiet, partition: 0, key: "early", value: [1])])

        var configuration = KafkaConsumerConfiguration.test(
            cluster.bootstrapServers,
            partitions: [.beginning(topic: busy, partition: 0), .beginning(topic: quiet, partition: 0),
                         .beginning(topic: quiet, partition: 1)])
        configuration.quietTopics = [quiet]
        configuration.quietProbeInterval = .milliseconds(300)
        configuration.additionalProperties["fetch.wait.max.ms"] = "10"
        // The low watermark (an empty partition's only sign of being idle before its first record)
        // is cached from statistics.
        configuration.statisticsInterval = .milliseconds(100)
        configuration.onStatistics = { _ in }
        let consumer = try KafkaConsumer(configuration: configuration)
        let q0 = KafkaTopicPartition(topic: quiet, partition: 0), q1 = KafkaTopicPartition(topic: quiet, partition: 1)

        // q0 once its one record is read, q1 from its empty log: both idle, both parked.
        #expect(try await take(1, from: consumer).map(\.partition) == [0])
        try await waitUntil("both quiet partitions parked") { consumer.parkedPartitions == [q0, q1] }

        // The busy topic is never parked and flows meanwhile.
        _ = try await producer.sendAll(makeMessages(5, topic: busy))
        let flowing = try await take(5, from: consumer)
        #expect(flowing.allSatisfy { $0.topic == busy })
        #expect(!consumer.parkedPartitions.contains { $0.topic == busy })

        // A record written to a parked partition is read at its next probe, then the partition
        // is parked again.
        _ = try await producer.sendAll([KafkaProducerMessage(topic: quiet, partition: 1, key: "late", value: [2])])
        let late = try await take(1, from: consumer, timeout: .seconds(10))
        #expect(late.map(\.topic) == [quiet] && late.map(\.partition) == [1] && late.map(\.offset) == [0])
        try await waitUntil("parked again") { consumer.parkedPartitions == [q0, q1] }
        await consumer.close()
        await producer.close()
    }
}
