import CRdKafka

/// Topic administration: creating topics at startup (`receiptd check`, `receiptd demo`) and
/// reading partition counts.
///
/// librdkafka 2.0.2's mock cluster does not implement CreateTopics (its metadata names no
/// controller, so the request times out). When the bootstrap servers belong to a
/// ``KafkaMockCluster`` running in this process, ``createTopics(_:timeout:)`` therefore
/// creates the topics through the mock's own API; against real brokers it uses the Admin API.
public final class KafkaAdminClient: Sendable {
    let client: RDKafkaClient
    private let bootstrapServers: [String]
    /// The raw properties the client was made with (reused for group-offset queries).
    let additionalProperties: [String: String]
    var bootstrapServerList: [String] { bootstrapServers }
    private let usesInProcessMock: Bool

    /// Creates an admin client.
    /// - Parameters:
    ///   - bootstrapServers: The initial brokers, each `host:port`.
    ///   - additionalProperties: Raw librdkafka properties (SASL, SSL), passed through unchanged.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/invalidConfiguration``) for invalid settings.
    public convenience init(bootstrapServers: [String], additionalProperties: [String: String] = [:]) throws {
        try self.init(
            bootstrapServers: bootstrapServers, additionalProperties: additionalProperties, usesInProcessMock: true)
    }

    /// Creates an admin client that can be told not to route to an in-process mock (tests of the Admin API path).
    @_spi(Testing)
    public init(bootstrapServers: [String], additionalProperties: [String: String] = [:], usesInProcessMock: Bool) throws {
        if let problem = KafkaNames.bootstrapProblem(bootstrapServers, field: "KafkaAdminClient.bootstrapServers") {
            throw KafkaError.invalidConfiguration(problem)
        }
        var properties = additionalProperties
        properties["bootstrap.servers"] = bootstrapServers.joined(separator: ",")
        client = try RDKafkaClient(kind: .consumer, properties: properties, context: RDKafkaCallbackContext())
        self.bootstrapServers = bootstrapServers
        self.additionalProperties = additionalProperties
        self.usesInProcessMock = usesInProcessMock
    }

    /// Creates topics; a topic that already exists counts as success, so startup code can call
    /// this unconditionally.
    /// - Parameters:
    ///   - specifications: The topics to create.
    ///   - timeout: How long to wait for the brokers.
    /// - Throws: ``KafkaError`` for an invalid specification or the first topic that failed.
    public func createTopics(_ specifications: [KafkaTopicSpecification], timeout: Duration = .seconds(30)) async throws {
        for specification in specifications { try specification.validate() }
        if specifications.isEmpty { return }
        if usesInProcessMock, let cluster = KafkaMockCluster.inProcess(for: bootstrapServers) {
            for specification in specifications {
                try cluster.createTopic(
                    name: specification.name, partitions: specification.partitions,
                    replicationFactor: specification.replicationFactor)
            }
            return
        }
        let client = self.client
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        try await BlockingExecutor.shared.run {
            try Self.createTopics(specifications, client: client.handle, timeoutMilliseconds: milliseconds)
        }
    }

    /// The number of partitions of `topic`, from broker metadata.
    /// - Parameters:
    ///   - topic: The topic name.
    ///   - timeout: How long to wait for the brokers.
    /// - Returns: The partition count.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/unknownTopicOrPartition``) when the topic does
    ///   not exist, or a timeout.
    public func partitionCount(topic: String, timeout: Duration = .seconds(10)) async throws -> Int {
        if let problem = KafkaNames.topicProblem(topic, field: "topic") { throw KafkaError.invalidArgument(problem) }
        let client = self.client
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        return try await BlockingExecutor.shared.run {
            // All-topics metadata: a request naming the topic could auto-create it on the broker.
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let result = rd_kafka_metadata(client.handle, 1, nil, &metadata, milliseconds)
            guard result == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
                throw KafkaError(result, context: "metadata for \(topic)")
            }
            defer { rd_kafka_metadata_destroy(metadata) }
            let topics = UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt))
            guard let entry = topics.first(where: { String(cString: $0.topic) == topic }) else {
                throw KafkaError(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, context: "metadata for \(topic)")
            }
            if entry.err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(entry.err, context: "metadata for \(topic)") }
            return Int(entry.partition_cnt)
        }
    }

    /// The Admin API path: one CreateTopics request, waited for on a private queue.
    private static func createTopics(
        _ specifications: [KafkaTopicSpecification], client: OpaquePointer, timeoutMilliseconds: Int32
    ) throws {
        var errorText = [CChar](repeating: 0, count: 512)
        func text() -> String { String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }

        var newTopics: [OpaquePointer?] = []
        defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
        for specification in specifications {
            guard let topic = rd_kafka_NewTopic_new(
                specification.name, Int32(specification.partitions), Int32(specification.replicationFactor),
                &errorText, errorText.count)
            else { throw KafkaError.invalidArgument("topic \"\(specification.name)\": \(text())") }
            newTopics.append(topic)
            for (key, value) in specification.config.sorted(by: { $0.key < $1.key }) {
                let result = rd_kafka_NewTopic_set_config(topic, key, value)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                    throw KafkaError(result, context: "config \(key) of topic \(specification.name)")
                }
            }
        }

        let options = rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        rd_kafka_AdminOptions_set_request_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
        rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
        let queue = rd_kafka_queue_new(client)
        defer { rd_kafka_queue_destroy(queue) }

        newTopics.withUnsafeMutableBufferPointer {
            rd_kafka_CreateTopics(client, $0.baseAddress, $0.count, options, queue)
        }
        guard let event = rd_kafka_queue_poll(queue, timeoutMilliseconds + 1000) else {
            throw KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT, context: "create topics")
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR {
            let message = rd_kafka_event_error_string(event).map { String(cString: $0) }
            throw KafkaError(eventError, message: message, context: "create topics")
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else { return }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return }
        for topicResult in UnsafeBufferPointer(start: results, count: count) {
            let code = rd_kafka_topic_result_error(topicResult)
            guard code != RD_KAFKA_RESP_ERR_NO_ERROR, code != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS else { continue }
            let name = String(cString: rd_kafka_topic_result_name(topicResult))
            let message = rd_kafka_topic_result_error_string(topicResult).map { String(cString: $0) }
            throw KafkaError(code, message: message, context: "create topic \(name)")
        }
    }
}
