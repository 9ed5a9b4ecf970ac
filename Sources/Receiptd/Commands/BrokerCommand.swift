import Foundation
import Kafka
import Lifecycle
import Observability

/// `receiptd broker`: the embedded Kafka broker for development, demos and tests.
///
/// It is librdkafka's mock cluster: a real Kafka wire-protocol server on loopback that any Kafka
/// client (other receiptd processes, kcat, Java clients) can use. It keeps data in memory only and,
/// in librdkafka 2.0.2, keeps only about the newest 5 MiB (and 100,000 message sets) per partition,
/// silently dropping older records; a first consumer-group join takes about 3 s. Hence 32
/// partitions per topic by default, and never for production data.
struct BrokerCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run the embedded Kafka broker (librdkafka mock cluster) on loopback",
        usage: """
        receiptd broker [--port N] [--brokers-count N] [--partitions N] [--config FILE]...

          --port N            stable bootstrap port (default 9092; 0 picks a free one)
          --brokers-count N   number of mock brokers (default 1)
          --partitions N      partitions per pipeline topic (default: topics.partitions, 32)
          --config FILE       configuration file(s) naming the topics (repeatable)

        Prints the bootstrap address on the first line of standard output, then runs until
        SIGINT/SIGTERM. Limits: in-memory only; keeps only the newest ~5 MiB per partition and
        silently drops older records; the first consumer-group join takes ~3 s.

        Admin tools (kcat -L works; kafka-topics, kafka-consumer-groups and confluent-kafka's
        AdminClient mostly do not): librdkafka's mock names controller 0 in its metadata while its
        only broker has id 1, so controller-bound calls (create/delete topics from another process)
        time out; it does not implement ListGroups or DescribeGroups; OffsetFetch for all topics
        answers nothing (ask for the topics by name); a topic it auto-creates on first use has 4
        partitions. Create topics with this command (--config, --partitions), not from clients.

        Restarts: the mock ignores static membership (group.instance.id), so a worker killed without
        leaving its group is replaced only after its session expires (kafka.sessionTimeoutSeconds,
        45 s by default). Give workers of this broker Config/embedded-broker.json as a second --config
        (a 10 s session), as receiptd dev does.
        """)

    var port: UInt16 = 9092
    var brokerCount = 1
    var partitions: Int?
    var configFiles: [String] = []

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--port", "--brokers-count", "--partitions", "--config"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        if let p = try parser.integer("--port", in: 0...65535) { port = UInt16(p) }
        brokerCount = try parser.integer("--brokers-count", in: 1...16) ?? 1
        partitions = try parser.integer("--partitions", in: 1...1024)
        configFiles = parser.options("--config")
    }

    func run() async throws -> Int32 {
        var loader = ConfigLoader.standard(files: configFiles)
        if let partitions { loader.overrides["topics"] = ["partitions": partitions] }
        let configuration = try loader.load()
        let logger = makeLogger(configuration, label: "receiptd.broker")
        // Creating every topic's partitions takes a few seconds; say so rather than sit silent.
        logger.notice("starting the embedded broker", metadata: [
            "port": .integer(Int64(port)), "topics": .integer(Int64(configuration.allTopicNames.count)),
            "partitions": .integer(configuration.topics.partitions),
        ])
        let broker = try EmbeddedBroker(brokerCount: brokerCount, port: port, configuration: configuration)
        print(broker.bootstrapServers)
        fflush(nil)
        logger.notice("embedded broker up", metadata: [
            "bootstrap": "\(broker.bootstrapServers)", "brokers": "\(broker.cluster.bootstrapServers)",
            "partitions": .integer(configuration.topics.partitions),
            "hint": "start workers with --config Config/embedded-broker.json too: a 10 s session, so a killed worker is replaced quickly",
        ])
        var signals = ServiceGroup.Configuration()
        signals.maximumGracefulShutdownDuration = .seconds(2)
        try await ServiceGroup(services: [broker], configuration: signals, logger: logger).run()
        broker.cluster.close()
        logger.notice("embedded broker stopped")
        return 0
    }
}

/// The mock cluster with a stable bootstrap port and the pipeline's topics, as a ``Service`` that
/// stays up until shut down.
final class EmbeddedBroker: Service {
    let cluster: KafkaMockCluster
    let bootstrapServers: String

    /// - Parameters:
    ///   - brokerCount: mock brokers to start.
    ///   - port: stable bootstrap port (0 for any free port).
    ///   - configuration: names the topics (retry tiers included) and their partition count.
    init(brokerCount: Int, port: UInt16, configuration: WorkerConfiguration) throws {
        cluster = try KafkaMockCluster(brokerCount: brokerCount)
        bootstrapServers = try cluster.listen(bootstrapPort: port)
        let topics = configuration.topics
        for name in configuration.allTopicNames {
            try cluster.createTopic(name: name, partitions: topics.partitions,
                                    replicationFactor: min(topics.replicationFactor, brokerCount))
        }
    }

    /// Consumer settings for the mock cluster: it holds an empty fetch for the whole
    /// `fetch.wait.max.ms` (librdkafka's default 500 ms) even when records arrive meanwhile, so
    /// each stage hop could wait that long (`bench pipeline` runs about a fifth faster with 10 ms).
    /// 25 ms rather than 10: the producers linger 40 ms, so a consumer between two batches made
    /// three empty round trips instead of one (13 alternating pairs: worker CPU per receipt 0.91
    /// and receipts/s 1.09 times 10 ms's, medians; docs/benchmarks.md, session 20).
    static let consumerProperties = ["fetch.wait.max.ms": "25"]

    /// Producer settings for the mock cluster: it checks producer ids and sequence numbers only
    /// for transactional producers, so an idempotent producer's batches are neither de-duplicated
    /// nor kept in order. With several requests in flight, a batch that failed (an injected
    /// Produce error, an outage) can be overtaken by the next, and librdkafka, inferring (as a real
    /// broker's sequence check would guarantee) that the failed batch was written, reports it
    /// delivered although it never was: our reading of the chaos run's lost acknowledged records,
    /// which this setting removed. One request in flight per connection keeps batches in order.
    /// Retried batches can still be written twice on this broker (docs/chaos.md).
    static let producerProperties = ["max.in.flight.requests.per.connection": "1"]

    /// Producer `linger.ms` for the mock cluster, where small batches cost more than on a broker:
    /// a partition's log is a list of the batches as produced, each fetch walks it from the oldest
    /// retained batch to find its offset and returns at most one batch per partition. Keyed
    /// records spread over 32 partitions, so with librdkafka's 5 ms nearly every batch held one
    /// record (`bench pipeline`: 40 ms cut CPU per receipt by about a tenth, docs/benchmarks.md).
    static let lingerMilliseconds = 40.0

    /// `configuration` for workers of this broker: bootstrap servers pointed here, and
    /// ``workerSettings(_:)``.
    func workerConfiguration(_ configuration: WorkerConfiguration) -> WorkerConfiguration {
        var configuration = Self.workerSettings(configuration)
        configuration.kafka.bootstrapServers = bootstrapServers
        return configuration
    }

    /// What workers of any embedded broker get: no topic creation (the broker created the topics;
    /// the mock does not implement CreateTopics for other processes), ``consumerProperties`` and
    /// ``producerProperties`` (an overlay's own values win), ``lingerMilliseconds`` where the
    /// configuration left the default, and the mock's rebalance wait (a session less a second).
    static func workerSettings(_ configuration: WorkerConfiguration) -> WorkerConfiguration {
        var configuration = configuration
        configuration.topics.create = false
        configuration.kafka.consumerProperties = consumerProperties.merging(configuration.kafka.consumerProperties) { _, own in own }
        configuration.kafka.producerProperties = producerProperties.merging(configuration.kafka.producerProperties) { _, own in own }
        if configuration.kafka.lingerMilliseconds == WorkerConfiguration.Kafka().lingerMilliseconds {
            configuration.kafka.lingerMilliseconds = lingerMilliseconds
        }
        // The mock waits a rebalance for members to rejoin the session timeout less a second, not
        // max.poll.interval.ms as a broker does. max.poll.interval.ms itself stays long: librdkafka
        // gives a JoinGroup that much plus 3 s, and a JoinGroup that times out while the mock holds
        // it makes the client join again on a new connection, which the mock cannot tell from
        // another member's and aborts on (docs/chaos.md, "the mock's assertion").
        configuration.kafka.rebalanceTimeoutSeconds = max(1, configuration.kafka.sessionTimeoutSeconds - 1)
        return configuration
    }

    func run() async throws {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withGracefulShutdownHandler(operation: { for await _ in stream {} },
                                          onGracefulShutdown: { continuation.finish() })
    }
}
