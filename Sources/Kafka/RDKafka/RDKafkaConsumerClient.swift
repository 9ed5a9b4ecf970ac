import CRdKafka
import struct Foundation.Date
#if canImport(Glibc)
import Glibc
#endif

/// What one `rd_kafka_consumer_poll` returned.
enum RDKafkaPolled: Sendable {
    case message(KafkaConsumerMessage)
    case error(KafkaError)
}

/// The librdkafka consumer calls ``KafkaConsumer`` needs, in Swift terms.
///
/// - Important: ``poll(timeoutMilliseconds:maxMessages:)`` and ``close()`` must only be called
///   from the consumer's poll thread (rebalance callbacks run inside them); every other
///   method is thread-safe.
final class RDKafkaConsumerClient: @unchecked Sendable {
    // @unchecked: `topicNames` is only touched by the poll thread; the rest is immutable.

    private let client: RDKafkaClient
    /// The consumer queue (`rd_kafka_queue_get_consumer`), kept to wake a blocked poll.
    private let consumerQueue: OpaquePointer
    /// Topic names by topic handle, so each message does not allocate its topic string.
    private var topicNames: [OpaquePointer: String] = [:]

    /// Creates the consumer handle and routes all events to the consumer queue, so one poll
    /// serves messages, rebalances and errors.
    init(properties: [String: String], context: RDKafkaCallbackContext) throws {
        client = try RDKafkaClient(kind: .consumer, properties: properties, context: context)
        rd_kafka_poll_set_consumer(client.handle)
        guard let queue = rd_kafka_queue_get_consumer(client.handle) else {
            throw KafkaError.invalidConfiguration("consumer has no group queue (group.id missing)")
        }
        consumerQueue = queue
    }

    deinit {
        rd_kafka_queue_destroy(consumerQueue)
    }

    /// Joins the group for `topics`.
    func subscribe(_ topics: [String]) throws {
        let list = RDKafkaTopicPartitionList(topics.map { KafkaTopicPartition(topic: $0, partition: -1) })
        let result = rd_kafka_subscribe(client.handle, list.pointer)
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "subscribe") }
    }

    /// Reads exactly `positions`, without group assignment.
    func assign(_ positions: [KafkaTopicPartitionOffset]) throws {
        let list = RDKafkaTopicPartitionList(positions)
        let result = rd_kafka_assign(client.handle, list.pointer)
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "assign") }
    }

    /// Polls once with `timeoutMilliseconds`, then drains without waiting, up to `maxMessages`.
    func poll(timeoutMilliseconds: Int32, maxMessages: Int) -> [RDKafkaPolled] {
        var results: [RDKafkaPolled] = []
        var timeout = timeoutMilliseconds
        while results.count < maxMessages, let message = rd_kafka_consumer_poll(client.handle, timeout) {
            timeout = 0
            defer { rd_kafka_message_destroy(message) }
            switch message.pointee.err {
            case RD_KAFKA_RESP_ERR_NO_ERROR:
                results.append(.message(makeMessage(message)))
            case RD_KAFKA_RESP_ERR__PARTITION_EOF:
                continue
            default:
                let text = rd_kafka_message_errstr(message).map { String(cString: $0) }
                results.append(.error(KafkaError(message.pointee.err, message: text)))
            }
        }
        return results
    }

    /// Makes a blocked ``poll(timeoutMilliseconds:maxMessages:)`` return now.
    func wake() {
        rd_kafka_queue_yield(consumerQueue)
    }

    /// Stores positions for the next commit, in one call. - Returns: each position's error, in
    /// order (nil where it was stored).
    func storeOffsets(_ positions: [KafkaTopicPartitionOffset]) -> [KafkaError?] {
        let list = RDKafkaTopicPartitionList(positions)
        let result = rd_kafka_offsets_store(client.handle, list.pointer)
        var errors = list.errors(context: "store offset for")
        if result != RD_KAFKA_RESP_ERR_NO_ERROR, !errors.contains(where: { $0 != nil }) {
            errors = Array(repeating: KafkaError(result, context: "store offsets"), count: positions.count)
        }
        return errors
    }

    /// Stops fetching `partitions`.
    func pause(_ partitions: [KafkaTopicPartition]) throws {
        let list = RDKafkaTopicPartitionList(partitions)
        let result = rd_kafka_pause_partitions(client.handle, list.pointer)
        if let error = list.firstError(context: "pause") { throw error }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "pause") }
    }

    /// Resumes fetching `partitions` from the position after the last message returned.
    func resume(_ partitions: [KafkaTopicPartition]) throws {
        let list = RDKafkaTopicPartitionList(partitions)
        let result = rd_kafka_resume_partitions(client.handle, list.pointer)
        if let error = list.firstError(context: "resume") { throw error }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "resume") }
    }

    /// Moves the fetch positions of assigned partitions; messages fetched before are discarded by
    /// librdkafka (its op version changes).
    /// - Important: Blocks until the seeks are performed (at most 5 s).
    func seek(_ positions: [KafkaTopicPartitionOffset]) throws {
        let list = RDKafkaTopicPartitionList(positions)
        if let error = rd_kafka_seek_partitions(client.handle, list.pointer, 5000) {
            throw KafkaError(consuming: error, context: "seek")
        }
        if let error = list.firstError(context: "seek") { throw error }
    }

    /// Commits stored offsets synchronously. "Nothing to commit" counts as success.
    /// - Important: Blocks until the coordinator answers.
    func commitStoredOffsets() throws {
        let result = rd_kafka_commit(client.handle, nil, 0)
        if result != RD_KAFKA_RESP_ERR_NO_ERROR && result != RD_KAFKA_RESP_ERR__NO_OFFSET {
            throw KafkaError(result, context: "commit")
        }
    }

    /// Leaves the group (running the final revoke) and stops fetching.
    /// - Important: Blocks; poll thread only.
    func close() -> KafkaError? {
        let result = rd_kafka_consumer_close(client.handle)
        return result == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(result, context: "consumer close")
    }

    /// The watermarks librdkafka last saw for a partition, without a request: the high one from
    /// its latest fetch response, the low one from statistics; nil where not known.
    func cachedWatermarks(_ partition: KafkaTopicPartition) -> (low: Int64?, high: Int64?) {
        var low: Int64 = 0
        var high: Int64 = 0
        let result = rd_kafka_get_watermark_offsets(client.handle, partition.topic, partition.partition, &low, &high)
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else { return (nil, nil) }
        return (low >= 0 ? low : nil, high >= 0 ? high : nil)
    }

    /// Asks the partition leader for its low and high watermarks.
    /// - Important: Blocks up to `timeoutMilliseconds`.
    func watermarks(topic: String, partition: Int32, timeoutMilliseconds: Int32) throws -> (low: Int64, high: Int64) {
        var low: Int64 = 0
        var high: Int64 = 0
        let result = rd_kafka_query_watermark_offsets(
            client.handle, topic, partition, &low, &high, timeoutMilliseconds)
        if result != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError(result, context: "watermarks of \(topic)[\(partition)]")
        }
        return (low, high)
    }

    /// Fetches the group's committed offsets.
    /// - Important: Blocks up to `timeoutMilliseconds`.
    func committed(_ partitions: [KafkaTopicPartition], timeoutMilliseconds: Int32) throws -> [KafkaTopicPartitionOffset] {
        let list = RDKafkaTopicPartitionList(partitions)
        let result = rd_kafka_committed(client.handle, list.pointer, timeoutMilliseconds)
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "committed") }
        if let error = list.firstError(context: "committed offset of") { throw error }
        return list.positions
    }

    /// The client's fatal error, if any.
    func fatalError() -> KafkaError? {
        client.fatalError()
    }

    // MARK: Message conversion

    private func makeMessage(_ message: UnsafeMutablePointer<rd_kafka_message_t>) -> KafkaConsumerMessage {
        let raw = message.pointee
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(message, &timestampType)
        return KafkaConsumerMessage(
            topic: topicName(raw.rkt),
            partition: raw.partition,
            offset: raw.offset,
            key: raw.key.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.key_len)) },
            value: raw.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.len)) } ?? [],
            headers: Self.headers(of: message),
            timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
                ? nil : Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        )
    }

    private func topicName(_ topic: OpaquePointer?) -> String {
        guard let topic, let cName = rd_kafka_topic_name(topic) else { return "" }
        // A handle address can be reused by another topic after it is freed: verify the name.
        if let cached = topicNames[topic], cached.withCString({ strcmp($0, cName) }) == 0 { return cached }
        let name = String(cString: cName)
        topicNames[topic] = name
        return name
    }

    private static func headers(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        let count = rd_kafka_header_cnt(list)
        var headers: [KafkaHeader] = []
        headers.reserveCapacity(count)
        for index in 0..<count {
            var name: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            guard rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR,
                let name
            else { continue }
            headers.append(
                KafkaHeader(
                    key: String(cString: name),
                    value: value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }))
        }
        return headers
    }
}
