import Kafka

/// The ``RecordSink`` of a stage worker: an idempotent Kafka producer (acks=all) whose `send`
/// returns once every record's delivery report arrived, which is what lets the runner store the
/// input's offset only after its outputs are durable. A record's explicit
/// ``OutboundRecord/partition`` is passed through to ``KafkaProducerMessage/partition``.
public final class KafkaRecordSink: RecordSink {
    private let producer: KafkaProducer

    /// - Parameter configuration: the producer configuration (idempotence and acks=all are its defaults).
    /// - Throws: ``KafkaError`` for invalid configuration.
    public init(configuration: KafkaProducerConfiguration) throws {
        producer = try KafkaProducer(configuration: configuration)
    }

    /// The underlying producer.
    public var kafkaProducer: KafkaProducer { producer }

    public func send(_ records: [OutboundRecord]) async throws {
        guard !records.isEmpty else { return }
        _ = try await producer.sendAll(records.map {
            KafkaProducerMessage(topic: $0.topic, partition: $0.partition, key: $0.key, value: $0.value,
                                 headers: $0.headers.map { KafkaHeader(key: $0.key, value: $0.value) })
        })
    }

    /// Purges the producer's queue (``KafkaProducer/discardUnsent()``). A refusal means nothing
    /// was queued that could be purged (librdkafka refuses only invalid flags or a non-producer).
    public func discardUnsent() async {
        try? producer.discardUnsent()
    }

    /// Flushes what is queued and closes the producer.
    public func close() async {
        await producer.close()
    }
}
