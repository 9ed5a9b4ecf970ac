@_spi(Testing) import Kafka
import Testing

@Suite("Topic administration", .timeLimit(.minutes(1)))
struct AdminTests {
    @Test("createTopics creates topics (existing ones count as success) and partitionCount reads them")
    func createAndCount() async throws {
        let cluster = try KafkaMockCluster()
        let admin = try KafkaAdminClient(bootstrapServers: cluster.bootstrapServers.split(separator: ",").map(String.init))
        let orders = uniqueTopic("orders")
        let audit = uniqueTopic("audit")
        try await admin.createTopics([
            KafkaTopicSpecification(name: orders, partitions: 3),
            KafkaTopicSpecification(name: audit, partitions: 1, config: ["retention.ms": "60000"]),
        ])
        try await admin.createTopics([KafkaTopicSpecification(name: orders, partitions: 3)])
        #expect(try await admin.partitionCount(topic: orders) == 3)
        #expect(try await admin.partitionCount(topic: audit) == 1)
        await #expect(throws: KafkaError.self) {
            _ = try await admin.partitionCount(topic: uniqueTopic("missing"), timeout: .seconds(3))
        }
    }

    @Test("invalid specifications are rejected before anything is sent")
    func invalidSpecification() async throws {
        let admin = try KafkaAdminClient(bootstrapServers: ["127.0.0.1:1"])
        do {
            try await admin.createTopics([KafkaTopicSpecification(name: "bad name!", partitions: 1)])
            Issue.record("expected an error")
        } catch let error as KafkaError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("bad name!"))
        }
        await #expect(throws: KafkaError.self) {
            try await admin.createTopics([KafkaTopicSpecification(name: "ok", partitions: 0)])
        }
    }

    @Test("the Admin API path reports the mock's missing controller as an error, not a hang")
    func adminApiPathAgainstMock() async throws {
        let cluster = try KafkaMockCluster()
        let admin = try KafkaAdminClient(
            bootstrapServers: [cluster.bootstrapServers], additionalProperties: ["log_level": "2"], usesInProcessMock: false)
        do {
            try await admin.createTopics([KafkaTopicSpecification(name: uniqueTopic("x"), partitions: 2)], timeout: .seconds(1))
            Issue.record("librdkafka 2.0.2's mock was expected to reject CreateTopics")
        } catch let error as KafkaError {
            #expect(error.code == .timedOut, "\(error)")
        }
    }
}
