import Kafka
import Testing

@Suite("Producer and consumer on the mock cluster", .timeLimit(.minutes(1)))
struct ProducerConsumerTests {
    @Test("round trip keeps key, value, headers and partition")
    func roundTrip() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("roundtrip")
        try cluster.createTopic(name: topic, partitions: 3)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        var sent = makeMessages(30, topic: topic, partitions: 3)
        sent[0].headers += [KafkaHeader(key: "null", value: nil), KafkaHeader(key: "empty", value: []), KafkaHeader(key: "index", string: "dup")]
        sent[1].key = nil
        let reports = try await producer.sendAll(sent)
        #expect(reports.map(\.partition) == sent.map { $0.partition! })

        let consumer = try KafkaConsumer(
            configuration: .test(
                cluster.bootstrapServers,
                partitions: (0..<3).map { KafkaTopicPartitionOffset.beginning(topic: topic, partition: $0) }))
        let received = try await take(30, from: consumer)
        #expect(received.filter { $0.key == nil }.count == 1)
        let byKey = Dictionary(uniqueKeysWithValues: received.map { (String(decoding: $0.key ?? [], as: UTF8.self), $0) })
        for message in sent {
            let key = String(decoding: message.key ?? [], as: UTF8.self)
            let got = try #require(byKey[key])
            #expect(got.value == message.value)
            #expect(got.partition == message.partition)
            #expect(got.headers == message.headers)
            #expect(got.topic == topic)
            #expect(got.timestamp != nil)
        }
        // Order per partition is production order.
        for partition in Int32(0)..<3 {
            let offsets = received.filter { $0.partition == partition }.map(\.offset)
            #expect(offsets == Array(0..<Int64(offsets.count)))
        }
        await consumer.close()
        await producer.close()
    }

    /// Every codec `kafka.compression` can name must reach a consumer unchanged through the mock
    /// cluster, which stores the compressed batches as produced (a Debian librdkafka built without
    /// one would fail here, not in a deployment).
    @Test("every compression codec round-trips", arguments: KafkaProducerConfiguration.Compression.allCases)
    func compressedRoundTrip(codec: KafkaProducerConfiguration.Compression) async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("compressed-\(codec)")
        try cluster.createTopic(name: topic, partitions: 1)
        var configuration = KafkaProducerConfiguration.test(cluster.bootstrapServers)
        configuration.compression = codec
        let producer = try KafkaProducer(configuration: configuration)
        // Repetitive values, as JWS sharing one certificate chain are, so the batch does compress.
        let sent = (0..<20).map { index in
            KafkaProducerMessage(topic: topic, partition: 0, key: "k\(index)",
                                 value: Array(String(repeating: "MIIEMDCCA7agAwIBAgIQ\(index)", count: 80).utf8))
        }
        _ = try await producer.sendAll(sent)
        let consumer = try KafkaConsumer(
            configuration: .test(cluster.bootstrapServers, partitions: [.beginning(topic: topic, partition: 0)]))
        let received = try await take(20, from: consumer)
        #expect(received.map(\.value) == sent.map(\.value))
        #expect(received.map(\.key) == sent.map(\.key))
        await consumer.close()
        await producer.close()
    }

    @Test("send resolves on the delivery report and carries the offset")
    func sendCarriesOffset() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("offsets")
        try cluster.createTopic(name: topic, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        var offsets: [Int64] = []
        for index in 0..<5 {
            let report = try await producer.send(
                KafkaProducerMessage(topic: topic, partition: 1, key: "k\(index)", value: [UInt8(index)]))
            #expect(report.topic == topic)
            #expect(report.partition == 1)
            offsets.append(report.offset)
        }
        #expect(offsets == [0, 1, 2, 3, 4])

        // Delivery means the broker has it: the high watermark already covers it.
        let consumer = try KafkaConsumer(
            configuration: .test(cluster.bootstrapServers, partitions: [.end(topic: topic, partition: 1)]))
        let marks = try await consumer.watermarks(topic: topic, partition: 1)
        #expect(marks.low == 0 && marks.high == 5)
        let empty = try await consumer.watermarks(topic: topic, partition: 0)
        #expect(empty.low == 0 && empty.high == 0)
        await consumer.close()

        // A null key goes through the partitioner and still gets a report.
        let keyless = try await producer.send(KafkaProducerMessage(topic: topic, value: [1, 2, 3]))
        #expect(keyless.offset >= 0)
        await producer.close()
        await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaProducerMessage(topic: topic, value: [1]))
        }
    }

    @Test("many concurrent sends and a full local queue all deliver")
    func queueFullBacksOff() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("queuefull")
        try cluster.createTopic(name: topic, partitions: 2)
        var configuration = KafkaProducerConfiguration.test(cluster.bootstrapServers)
        configuration.additionalProperties["queue.buffering.max.messages"] = "50"
        let producer = try KafkaProducer(configuration: configuration)

        let batch = try await producer.sendAll(makeMessages(2_000, topic: topic, partitions: 2))
        #expect(batch.count == 2_000)
        let single = try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
            for message in makeMessages(500, topic: topic, partitions: 2, offset: 2_000) {
                group.addTask { try await producer.send(message) }
            }
            return try await group.reduce(into: [KafkaDeliveryReport]()) { $0.append($1) }
        }
        #expect(single.count == 500)
        let all = batch + single
        #expect(Set(all.map { "\($0.partition)/\($0.offset)" }).count == 2_500)
        try await producer.flush(timeout: .seconds(5))
        await producer.close()
    }

    @Test("explicit assignment starts at the given offsets")
    func assignWithOffsets() async throws {
        let cluster = try KafkaMockCluster()
        let topic = uniqueTopic("assign")
        try cluster.createTopic(name: topic, partitions: 2)
        let producer = try KafkaProducer(configuration: .test(cluster.bootstrapServers))
        _ = try await producer.sendAll(makeMessages(20, topic: topic, partitions: 2))  // 10 per partition

        let consumer = try KafkaConsumer(
            configuration: .test(
                cluster.bootstrapServers,
                partitions: [
                    KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: 7),
                    .beginning(topic: topic, partition: 1),
                ]))
        let received = try await take(13, from: consumer)
        #expect(received.filter { $0.partition == 0 }.map(\.offset) == [7, 8, 9])
        #expect(received.filter { $0.partition == 1 }.map(\.offset) == Array(0..<10))
        #expect(consumer.assignment.count == 2)

        // The end position only sees what is produced afterwards: keep producing until the
        // tail consumer sees something, then check it skipped the existing ten.
        let tail = try KafkaConsumer(configuration: .test(cluster.bootstrapServers, partitions: [.end(topic: topic, partition: 0)]))
        let feeder = Task {
            var index = 0
            while !Task.isCancelled {
                _ = try? await producer.send(KafkaProducerMessage(topic: topic, partition: 0, key: "late\(index)", value: [9]))
                index += 1
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        let tailReceived = try await take(1, from: tail)
        feeder.cancel()
        _ = await feeder.value
        #expect(tailReceived.first.map { $0.offset >= 10 } == true)
        #expect(tailReceived.first?.key.map { String(decoding: $0, as: UTF8.self).hasPrefix("late") } == true)
        await tail.close()
        await consumer.close()
        await producer.close()
    }
}
