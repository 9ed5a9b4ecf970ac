import CRdKafka

extension KafkaAdminClient {
    /// The offsets consumer group `group` has committed for `partitions` (`invalidOffset` where it
    /// has none), read without joining the group: a consumer handle configured with the group id
    /// asks the coordinator (OffsetFetch) and never subscribes, so no rebalance is triggered.
    ///
    /// Operators and the chaos run use it to check that the broker never dropped (retention) a
    /// record a group had not consumed yet: the partition's low watermark must not pass it.
    /// - Parameters:
    ///   - group: The consumer group.
    ///   - partitions: The partitions to ask about.
    ///   - timeout: How long to wait for the coordinator.
    /// - Throws: ``KafkaError`` when the coordinator does not answer.
    public func committedOffsets(group: String, partitions: [KafkaTopicPartition],
                                 timeout: Duration = .seconds(10)) async throws -> [KafkaTopicPartitionOffset] {
        var properties = additionalProperties
        properties["bootstrap.servers"] = bootstrapServerList.joined(separator: ",")
        properties["group.id"] = group
        properties["enable.auto.commit"] = "false"
        let client = try RDKafkaClient(kind: .consumer, properties: properties, context: RDKafkaCallbackContext())
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        return try await BlockingExecutor.shared.run {
            let list = RDKafkaTopicPartitionList(partitions)
            let result = rd_kafka_committed(client.handle, list.pointer, milliseconds)
            if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "committed offsets of \(group)") }
            return RDKafkaTopicPartitionList.positions(of: list.pointer)
        }
    }

    /// A partition's low and high watermarks (first retained offset, next offset).
    public func watermarks(topic: String, partition: Int32, timeout: Duration = .seconds(10)) async throws -> (low: Int64, high: Int64) {
        let client = self.client
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        return try await BlockingExecutor.shared.run {
            var low: Int64 = 0, high: Int64 = 0
            let result = rd_kafka_query_watermark_offsets(client.handle, topic, partition, &low, &high, milliseconds)
            if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "watermarks of \(topic)[\(partition)]") }
            return (low, high)
        }
    }
}
