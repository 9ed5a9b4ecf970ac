import Kafka
import Observability

/// One stage as a Kafka consumer-group member: the wiring every `receiptd` stage worker and the
/// broker integration tests share, so the tests exercise what production runs.
///
/// - **Assignor.** `range`: partition p of the input and of every retry tier goes to the same
///   member, which co-partitioned state (fulfil's ledger, the owner view) relies on.
/// - **Consumer buffer.** Twice `maxInFlight` (at least 64) messages between librdkafka and the
///   runner's hand-off, so backpressure reaches librdkafka's fetching.
/// - **Retry tiers parked while empty.** The tiers are the consumer's quiet topics: their idle
///   partitions are left out of fetch requests and probed every second, or every half of the
///   shortest tier delay if that is less (at least 50 ms): a retry is read at most that long,
///   plus about two fetch waits, after it was written. On the embedded broker four idle tiers
///   added about a quarter to what librdkafka spends per record (docs/benchmarks.md, session 17).
/// - **Revocation timeout.** A revoked partition is released once its in-flight records settled
///   (processing ends within the record timeout, every output's delivery within the producer's
///   message timeout), or, at the latest, while the group still waits for this member; records
///   still running then are fenced. Releasing them unfenced could let an output land after the
///   next owner rebuilt its state from that partition (the chaos run saw events emitted twice when
///   a broker outage held deliveries past the wait). The consumer's own wait is 5 s longer, so the
///   runner always answers first.
/// - **Close order.** ``run()`` flushes the producer (every delivery settled) *before* the consumer
///   leaves the group: once this member is gone the next owner rebuilds state from the output
///   partitions, and an output landing after that would be emitted twice. Then the consumer
///   commits its stored offsets and leaves.
public final class KafkaStageWorker<S: Stage>: Sendable {
    /// The runner (counters such as ``StageRunner/peakInFlight``).
    public let runner: StageRunner<S>
    /// The consumer-group member.
    public let source: KafkaRecordSource
    /// The idempotent producer.
    public let sink: KafkaRecordSink
    /// The runner's limits, with the revocation timeout this wiring derived.
    public let configuration: StageRunnerConfiguration
    /// The consumer's settings as this wiring completed them (assignor, buffer).
    public let consumerConfiguration: KafkaConsumerConfiguration

    /// Assembles the worker; nothing connects until ``run()``.
    /// - Parameters:
    ///   - consumer: bootstrap servers, group and subscription (the stage's input and its tiers),
    ///     client settings; the assignor and buffer size are set here.
    ///   - producer: the producer's settings.
    ///   - configuration: the runner's limits; its `revocationTimeout` is derived here.
    ///   - retryPolicy: what transient failures do (tiers matching the subscription).
    ///   - assignmentHook: state to prepare per assigned partition (fulfil's ledger, the owner view).
    /// - Throws: ``KafkaError`` for invalid client settings.
    public init(stage: S, consumer: KafkaConsumerConfiguration, producer: KafkaProducerConfiguration,
                configuration: StageRunnerConfiguration, retryPolicy: any RetryPolicy = .never,
                assignmentHook: (any PartitionAssignmentHook)? = nil, logger: Logger, metrics: MetricsRegistry = .shared,
                clock: any WallClock = SystemWallClock()) throws {
        var consumer = consumer
        consumer.partitionAssignmentStrategy = .range
        consumer.maxBufferedMessages = max(64, configuration.maxInFlight * 2)
        if case .group(_, let topics) = consumer.consumptionStrategy {
            consumer.quietTopics = Set(topics.filter { configuration.topics.retryTier(of: $0, stage: S.name) != nil })
        }
        if let shortest = (retryPolicy as? TieredRetryPolicy)?.delays.min() {
            consumer.quietProbeInterval = min(.seconds(1), max(.milliseconds(50), shortest / 2))
        }
        var configuration = configuration
        configuration.revocationTimeout = Self.revocationTimeout(configuration, producer: producer, consumer: consumer)
        source = try KafkaRecordSource(configuration: consumer, revocationTimeout: configuration.revocationTimeout + .seconds(5),
                                       logger: logger)
        sink = try KafkaRecordSink(configuration: producer)
        runner = StageRunner(stage: stage, source: source, sink: sink, configuration: configuration, retryPolicy: retryPolicy,
                             assignmentHook: assignmentHook, logger: logger, metrics: metrics, clock: clock)
        self.configuration = configuration
        consumerConfiguration = consumer
    }

    /// How long a revocation waits for in-flight records: their processing plus their outputs'
    /// delivery plus a margin, and never under the shutdown grace period (at least 5 s); but
    /// always within the group's patience: a rebalance waits for this member's revocation only for
    /// the rebalance timeout (`max.poll.interval.ms` unless the consumer's `rebalanceTimeout` says
    /// the brokers wait less, as librdkafka's mock does), which starts before the member hears of
    /// it (up to a heartbeat interval later).
    /// Past it the partitions go to another member while these records could still write; the
    /// runner fences them instead (``StageRunner``).
    public static func revocationTimeout(_ configuration: StageRunnerConfiguration, producer: KafkaProducerConfiguration,
                                         consumer: KafkaConsumerConfiguration) -> Duration {
        let drain = max(max(.seconds(5), configuration.shutdownGracePeriod),
                        configuration.processingTimeout + producer.messageTimeout + .seconds(5))
        let window = (consumer.rebalanceTimeout ?? consumer.maxPollInterval) - consumer.heartbeatInterval - .seconds(2)
        return max(.seconds(1), min(drain, window))
    }

    /// Runs the stage until ``shutdownGracefully()``, cancellation or a fatal error, then closes
    /// the producer and the consumer in that order (see the type's documentation).
    /// - Throws: what ``StageRunner/run()`` throws, after closing.
    public func run() async throws {
        var failure: (any Error)?
        do {
            try await runner.run()
        } catch {
            failure = error
        }
        await sink.close()
        await source.close()
        if let failure { throw failure }
    }

    /// Asks the runner to drain and stop (``StageRunner/shutdownGracefully()``).
    public func shutdownGracefully() {
        runner.shutdownGracefully()
    }
}
