import CRdKafka

/// Owns one `rd_kafka_topic_partition_list_t`, converting to and from Swift values.
final class RDKafkaTopicPartitionList {
    /// The list pointer, valid until this object is released.
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// Creates a list of partitions with offsets.
    init(_ positions: [KafkaTopicPartitionOffset]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(max(positions.count, 1)))
        for position in positions {
            let element = rd_kafka_topic_partition_list_add(pointer, position.topic, position.partition)
            element?.pointee.offset = position.offset
        }
    }

    /// Creates a list of partitions (offsets unset).
    convenience init(_ partitions: [KafkaTopicPartition]) {
        self.init(partitions.map { KafkaTopicPartitionOffset($0, offset: KafkaTopicPartitionOffset.invalidOffset) })
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }

    /// The positions in the list.
    var positions: [KafkaTopicPartitionOffset] {
        Self.positions(of: pointer)
    }

    /// The first per-partition error in the list, if any.
    func firstError(context: String) -> KafkaError? {
        Self.elements(of: pointer).lazy.compactMap { element -> KafkaError? in
            guard element.err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
            let topic = String(cString: element.topic)
            return KafkaError(element.err, context: "\(context) \(topic)[\(element.partition)]")
        }.first
    }

    /// Each element's error, in the order the elements were added (nil where there is none).
    func errors(context: String) -> [KafkaError?] {
        Self.elements(of: pointer).map { element -> KafkaError? in
            guard element.err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
            return KafkaError(element.err, context: "\(context) \(String(cString: element.topic))[\(element.partition)]")
        }
    }

    /// The positions in a list that someone else owns (for example one passed to a callback).
    static func positions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartitionOffset] {
        elements(of: list).map { element in
            KafkaTopicPartitionOffset(
                topic: String(cString: element.topic), partition: element.partition, offset: element.offset)
        }
    }

    private static func elements(
        of list: UnsafePointer<rd_kafka_topic_partition_list_t>
    ) -> UnsafeBufferPointer<rd_kafka_topic_partition_t> {
        UnsafeBufferPointer(start: list.pointee.elems, count: Int(list.pointee.cnt))
    }
}

extension UnsafeMutablePointer where Pointee == rd_kafka_topic_partition_list_t {
    /// Topic-partition pairs of a borrowed list.
    var topicPartitions: [KafkaTopicPartition] {
        RDKafkaTopicPartitionList.positions(of: self).map(\.topicPartition)
    }
}
