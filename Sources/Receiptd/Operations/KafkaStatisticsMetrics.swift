import Kafka
import Observability
import Synchronization

/// Turns each librdkafka statistics report into gauges: consumer lag per assigned partition,
/// queue depths, broker state and round-trip, rebalances. Series of partitions no longer
/// assigned (and brokers gone) are removed, so lag never reads from a stale assignment.
/// Runs once per `observability.statisticsIntervalSeconds`, never per record.
final class KafkaStatisticsMetrics: Sendable {
    private let registry: MetricsRegistry
    private let shown = Mutex<(partitions: Set<[String]>, brokers: Set<String>)>(([], []))
    private let latest = Latest()

    /// The last report, shared with the scrape-time functions.
    private final class Latest: Sendable {
        let report = Mutex<KafkaStatistics?>(nil)
    }

    init(registry: MetricsRegistry) {
        self.registry = registry
        func value(_ body: @escaping @Sendable (KafkaStatistics) -> Int64) -> @Sendable () -> Double {
            { [latest] in Double(latest.report.withLock { $0.map(body) } ?? 0) }
        }
        registry.function("receiptd_kafka_rebalances_total", help: "Rebalances this worker's consumer went through.",
                          kind: .counter, value { $0.consumerGroup?.rebalanceCount ?? 0 })
        registry.function("receiptd_kafka_assigned_partitions", help: "Partitions assigned to this worker's consumer.",
                          kind: .gauge, value { $0.consumerGroup?.assignmentSize ?? 0 })
        registry.function("receiptd_kafka_reply_queue_operations",
                          help: "librdkafka operations waiting for the application's poll (replyq).",
                          kind: .gauge, value { $0.replyQueue })
        registry.function("receiptd_kafka_fetch_queue_messages",
                          help: "Messages fetched and not yet handed to the runner, all partitions.",
                          kind: .gauge, value { $0.topics.values.reduce(0) { $0 + $1.partitions.values.reduce(0) { $0 + $1.fetchQueue } } })
        registry.function("receiptd_kafka_brokers_up", help: "Broker connections in state UP.",
                          kind: .gauge, value { Int64($0.brokers.values.filter { $0.state == "UP" && $0.isBroker }.count) })
    }

    /// A producer's report arrived (from its poll thread): how much output waits to be acknowledged.
    func updateProducer(_ statistics: KafkaStatistics) {
        registry.gauge("receiptd_kafka_producer_queue_messages",
                       help: "Output records queued or in flight in this worker's producer, not yet acknowledged.")
            .set(Double(statistics.messageCount))
    }

    /// A report arrived (from the consumer's poll thread).
    func update(_ statistics: KafkaStatistics) {
        latest.report.withLock { $0 = statistics }
        var partitions: Set<[String]> = []
        for (topic, entry) in statistics.topics {
            for (number, partition) in entry.partitions where partition.isFetching {
                guard let lag = partition.lag else { continue }
                let labels = [topic, String(number)]
                partitions.insert(labels)
                registry.gauge("receiptd_kafka_consumer_lag_messages",
                               help: "Messages between this worker's committed offset and the end of each assigned partition.",
                               labels: [("topic", topic), ("partition", labels[1])]).set(Double(lag))
            }
        }
        var brokers: Set<String> = []
        for (name, broker) in statistics.brokers where broker.isBroker {
            brokers.insert(name)
            registry.gauge("receiptd_kafka_broker_rtt_seconds", help: "Average broker round-trip time over the last interval.",
                           labels: [("broker", name)]).set(Double(broker.rttAverageMicroseconds) / 1e6)
            registry.gauge("receiptd_kafka_broker_waiting_requests", help: "Requests sent to the broker awaiting a response.",
                           labels: [("broker", name)]).set(Double(broker.waitingResponses))
        }
        let (gonePartitions, goneBrokers) = shown.withLock { shown -> (Set<[String]>, Set<String>) in
            defer { shown = (partitions, brokers) }
            return (shown.partitions.subtracting(partitions), shown.brokers.subtracting(brokers))
        }
        for labels in gonePartitions {
            registry.remove("receiptd_kafka_consumer_lag_messages", labels: [("topic", labels[0]), ("partition", labels[1])])
        }
        for name in goneBrokers {
            registry.remove("receiptd_kafka_broker_rtt_seconds", labels: [("broker", name)])
            registry.remove("receiptd_kafka_broker_waiting_requests", labels: [("broker", name)])
        }
    }
}
