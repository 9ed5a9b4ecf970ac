import Kafka
import Testing

@Suite("Configuration validation and errors (no broker)")
struct ConfigurationTests {
    private func problem(_ validate: () throws -> Void) -> String? {
        do {
            try validate()
            return nil
        } catch let error as KafkaError {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.isRetriable)
            return error.message
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test("producer defaults are valid and carry the fixed delivery semantics")
    func producerDefaults() throws {
        let configuration = KafkaProducerConfiguration(bootstrapServers: ["localhost:9092"])
        try configuration.validate()
        #expect(configuration.enableIdempotence)
        #expect(configuration.acks == .all)
        #expect(configuration.linger == .milliseconds(5))
    }

    @Test("producer problems are reported precisely")
    func producerProblems() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: [])
        #expect(problem(configuration.validate)?.contains("bootstrapServers must list at least one") == true)
        configuration.bootstrapServers = ["a:9092,b:9092"]
        #expect(problem(configuration.validate)?.contains("one array element per broker") == true)
        configuration.bootstrapServers = ["kafka:notaport"]
        #expect(problem(configuration.validate)?.contains("invalid port") == true)
        configuration.bootstrapServers = ["SASL_SSL://kafka:9093"]
        #expect(problem(configuration.validate) == nil)
        configuration.acks = .leaderOnly
        #expect(problem(configuration.validate)?.contains("acks must be .all when enableIdempotence") == true)
        configuration.enableIdempotence = false
        #expect(problem(configuration.validate) == nil)
        configuration.linger = .seconds(2)
        configuration.messageTimeout = .seconds(1)
        #expect(problem(configuration.validate)?.contains("messageTimeout") == true)
        configuration.messageTimeout = .seconds(10)
        configuration.additionalProperties = ["linger.ms": "10"]
        #expect(problem(configuration.validate)?.contains("additionalProperties[\"linger.ms\"] is not allowed: set linger") == true)
        configuration.additionalProperties = ["security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN"]
        #expect(problem(configuration.validate) == nil)
    }

    @Test("librdkafka's own rejection names the key")
    func unknownProperty() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: ["127.0.0.1:1"])
        configuration.additionalProperties = ["no.such.property": "1"]
        #expect(problem { _ = try KafkaProducer(configuration: configuration) }?.contains("no.such.property") == true)
    }

    @Test("consumer problems are reported precisely")
    func consumerProblems() {
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: ["localhost:9092"], consumptionStrategy: .group(id: "g", topics: ["receipts.submitted"]))
        #expect(problem(configuration.validate) == nil)
        configuration.consumptionStrategy = .group(id: "", topics: ["t"])
        #expect(problem(configuration.validate)?.contains(".group(id:) must not be empty") == true)
        configuration.consumptionStrategy = .group(id: "g", topics: ["bad topic"])
        #expect(problem(configuration.validate)?.contains("\"bad topic\"") == true)
        configuration.consumptionStrategy = .group(id: "g", topics: ["t", "t"])
        #expect(problem(configuration.validate)?.contains("twice") == true)
        configuration.consumptionStrategy = .partitions([])
        #expect(problem(configuration.validate)?.contains("at least one partition") == true)
        configuration.consumptionStrategy = .partitions([KafkaTopicPartitionOffset(topic: "t", partition: 0, offset: -7)])
        #expect(problem(configuration.validate)?.contains("offset -7") == true)
        configuration.consumptionStrategy = .partitions([.beginning(topic: "t", partition: 0), .end(topic: "t", partition: 0)])
        #expect(problem(configuration.validate)?.contains("twice") == true)
        configuration.consumptionStrategy = .partitions([.beginning(topic: "t", partition: 0)])
        configuration.heartbeatInterval = .seconds(50)
        #expect(problem(configuration.validate)?.contains("heartbeatInterval") == true)
        configuration.heartbeatInterval = .seconds(3)
        configuration.maxPollInterval = .seconds(10)
        #expect(problem(configuration.validate)?.contains("maxPollInterval") == true)
        configuration.maxPollInterval = .seconds(300)
        configuration.rebalanceTimeout = .seconds(301)
        #expect(problem(configuration.validate)?.contains("rebalanceTimeout") == true)
        configuration.rebalanceTimeout = .zero
        #expect(problem(configuration.validate)?.contains("rebalanceTimeout") == true)
        configuration.rebalanceTimeout = .seconds(6)
        #expect(problem(configuration.validate) == nil)
        configuration.maxBufferedMessages = 0
        #expect(problem(configuration.validate)?.contains("maxBufferedMessages") == true)
        configuration.maxBufferedMessages = 10
        configuration.additionalProperties = ["enable.auto.offset.store": "true"]
        #expect(problem(configuration.validate)?.contains("fixed delivery semantics") == true)
    }

    @Test("error codes have names and classifications")
    func errorCodes() {
        #expect(KafkaError.Code.queueFull.name == "_QUEUE_FULL")
        #expect(KafkaError.Code.notLeaderForPartition.name == "NOT_LEADER_FOR_PARTITION")
        #expect(KafkaError.Code.invalidConfiguration.name == "INVALID_CONFIGURATION")
        #expect(KafkaError.Code.partitionNotAssigned.description == "PARTITION_NOT_ASSIGNED (-10003)")
        let timeout = KafkaError(code: .messageTimedOut, message: "late")
        #expect(timeout.isRetriable && !timeout.isFatal)
        #expect(timeout.description.contains("_MSG_TIMED_OUT") && timeout.description.contains("[retriable]"))
        #expect(!KafkaError(code: .topicAlreadyExists, message: "x").isRetriable)
        #expect(KafkaTopicPartitionOffset.beginning(topic: "t", partition: 2).description == "t[2]@beginning")
        #expect(KafkaHeader(key: "a", string: "b").stringValue == "b")
    }
}
