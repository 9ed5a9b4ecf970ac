import Kafka
import Synchronization

/// The ``DeadLetterReader`` over Kafka: a consumer with an explicit partition assignment (no
/// consumer group, no offset commits), so a replay never disturbs a group and can run anywhere.
///
/// ``open(partition:fromOffset:toOffset:)`` assigns the partitions at their starts and reads
/// each one's high watermark: that is where reading ends, so dead letters produced during the
/// replay are left for a later one. ``records()`` pulls from the consumer as it is iterated (a
/// slow, rate-limited replay does not buffer the topic in memory) and ends once every range is
/// read. If no record arrives for `idleTimeout` while ranges are unfinished (a partition's last
/// offsets are transaction markers, or the cluster is gone), the sequence throws
/// ``KafkaDeadLetterReader/StalledError`` instead of waiting forever.
public final class KafkaDeadLetterReader: DeadLetterReader {
    /// Reading stopped before every range was read.
    public struct StalledError: Error, CustomStringConvertible {
        /// What was left unread.
        public var description: String
    }

    private struct State {
        var consumer: KafkaConsumer?
        var ranges: [DeadLetterRange] = []
    }

    private let bootstrapServers: [String]
    private let properties: [String: String]
    private let topic: String
    private let idleTimeout: Duration
    private let state = Mutex(State())

    /// - Parameters:
    ///   - bootstrapServers: the cluster.
    ///   - properties: raw librdkafka properties (SASL/SSL).
    ///   - topic: the dead-letter topic.
    ///   - idleTimeout: how long to wait for the next record of an unfinished range.
    public init(bootstrapServers: [String], properties: [String: String] = [:], topic: String,
                idleTimeout: Duration = .seconds(30)) {
        self.bootstrapServers = bootstrapServers
        self.properties = properties
        self.topic = topic
        self.idleTimeout = idleTimeout
    }

    public func open(partition: Int32?, fromOffset: Int64?, toOffset: Int64?) async throws -> [DeadLetterRange] {
        let admin = try KafkaAdminClient(bootstrapServers: bootstrapServers, additionalProperties: properties)
        let count = Int32(try await admin.partitionCount(topic: topic))
        if let partition, !(0..<count).contains(partition) {
            throw PipelineConfigurationError("\(topic) has no partition \(partition) (it has \(count))")
        }
        let partitions = partition.map { [$0] } ?? Array(0..<count)
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers,
            consumptionStrategy: .partitions(partitions.map {
                KafkaTopicPartitionOffset(topic: topic, partition: $0,
                                          offset: fromOffset ?? KafkaTopicPartitionOffset.beginningOffset)
            }))
        configuration.clientId = "receiptd-replay"
        configuration.additionalProperties = properties
        let consumer = try KafkaConsumer(configuration: configuration)
        state.withLock { $0.consumer = consumer }
        var ranges: [DeadLetterRange] = []
        for p in partitions {
            let (low, high) = try await consumer.watermarks(topic: topic, partition: p)
            let range = DeadLetterRange(partition: p, start: max(low, fromOffset ?? low),
                                        end: min(high, toOffset.map { $0 + 1 } ?? high))
            if range.span > 0 { ranges.append(range) }
        }
        state.withLock { $0.ranges = ranges }
        return ranges
    }

    public func records() -> AsyncThrowingStream<InboundRecord, any Error> {
        let (consumer, ranges) = state.withLock { ($0.consumer, $0.ranges) }
        guard let consumer, !ranges.isEmpty else { return AsyncThrowingStream { $0.finish() } }
        let cursor = Cursor(consumer: consumer, topic: topic, ranges: ranges, idleTimeout: idleTimeout)
        return AsyncThrowingStream { try await cursor.next() }
    }

    public func close() async {
        let consumer = state.withLock { state -> KafkaConsumer? in
            defer { state.consumer = nil }
            return state.consumer
        }
        await consumer?.close()
    }

    /// Walks the consumer's messages until every range is read, under one ``ConsumerIdleWatchdog``
    /// (time the replay spends between records, its rate limit, does not count). Used by one
    /// stream, whose `unfolding` closure is never called concurrently (hence `@unchecked Sendable`).
    private final class Cursor: @unchecked Sendable {
        private var messages: KafkaConsumerMessages.AsyncIterator
        private let watchdog: ConsumerIdleWatchdog
        private let topic: String
        private let ranges: [Int32: DeadLetterRange]
        private var unfinished: Set<Int32>
        private let idleTimeout: Duration

        init(consumer: KafkaConsumer, topic: String, ranges: [DeadLetterRange], idleTimeout: Duration) {
            messages = consumer.messages.makeAsyncIterator()
            watchdog = ConsumerIdleWatchdog(closing: consumer, after: idleTimeout)
            self.topic = topic
            self.ranges = Dictionary(ranges.map { ($0.partition, $0) }, uniquingKeysWith: { first, _ in first })
            unfinished = Set(ranges.map(\.partition))
            self.idleTimeout = idleTimeout
        }

        func next() async throws -> InboundRecord? {
            while !unfinished.isEmpty {
                guard let message = try await watchdog.next(&messages) else {
                    watchdog.stop()
                    let unread = unfinished.sorted()
                    throw StalledError(description: watchdog.fired
                        ? "no record for \(idleTimeout) while \(topic) partitions \(unread) were not read to their end "
                            + "(transaction markers, or the cluster is unreachable)"
                        : "the consumer closed before \(topic) partitions \(unread) were read to their end")
                }
                guard message.topic == topic, let range = ranges[message.partition],
                      unfinished.contains(message.partition) else { continue }
                if message.offset >= range.end - 1 { unfinished.remove(message.partition) }
                if message.offset >= range.start && message.offset < range.end { return InboundRecord(message) }
            }
            watchdog.stop()
            return nil
        }
    }
}
