import AppStore
import Foundation
import HTTP
import Kafka
import Lifecycle
import Observability
import Pipeline

/// What `receiptd ingest|verify|fulfil` share: options, configuration, and the wiring of one
/// stage into the generic ``StageRunner`` over a Kafka consumer-group member and producer.
struct StageWorkerOptions: Sendable {
    static let optionNames: Set<String> = ["--config", "--brokers", "--group", "--max-in-flight", "--observability-port"]
    static let usage = """
          --config FILE        configuration file (repeatable; later files override earlier ones)
          --brokers LIST       Kafka bootstrap servers (overrides kafka.bootstrapServers)
          --group ID           consumer group id (overrides groups.<stage>)
          --max-in-flight N    records processed concurrently (overrides runner.maxInFlight)
          --observability-port N
                               port of /metrics, /healthz and /readyz (overrides observability.port,
                               default 9464; 0 turns them off)

        Consumes the stage's input topic and its retry tiers (<input>.retry.1..n, one per entry of
        retry.tierDelaysSeconds) in one consumer group; a tier record is held, its partition paused,
        until its receiptd-not-before. Runs until SIGTERM/SIGINT: then stops fetching, drops held
        retries (their offsets were never stored), finishes in-flight records within
        runner.shutdownGraceSeconds, stores and commits their offsets, and exits 0.
        """

    var configFiles: [String] = []
    var brokers: String?
    var group: String?
    var maxInFlight: Int?
    var observabilityPort: Int?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: Self.optionNames)
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
        group = parser.option("--group")
        maxInFlight = try parser.integer("--max-in-flight", in: 1...100_000)
        observabilityPort = try parser.integer("--observability-port", in: 0...65535)
    }

    /// The configuration after files, `RECEIPTD_*` variables and these options.
    func load(stage: StageName) throws -> WorkerConfiguration {
        var loader = ConfigLoader.standard(files: configFiles, brokers: brokers)
        if let group { loader.overrides["groups"] = [stage.rawValue: group] }
        if let maxInFlight { loader.overrides["runner"] = ["maxInFlight": maxInFlight] }
        if let observabilityPort { loader.overrides["observability"] = ["port": observabilityPort] }
        return try loader.load()
    }
}

enum StageWorker {
    /// Runs `stage` as a consumer-group worker until shut down.
    /// - Parameters:
    ///   - assignmentHook: state to prepare per assigned partition (fulfil's Kafka ledger).
    /// - Returns: the exit status (0 after a graceful shutdown).
    /// - Throws: ``PipelineConfigurationError`` when a co-partitioned stage's topics have the wrong
    ///   partition counts (the worker refuses to start).
    static func run<S: Stage>(_ stage: S, configuration: WorkerConfiguration, logger: Logger,
                              assignmentHook: (any PartitionAssignmentHook)? = nil,
                              metrics: MetricsRegistry = .shared) async throws -> Int32 {
        let topics = configuration.pipelineTopics
        let groupId = configuration.groupId(for: S.name)
        let brokers = configuration.bootstrapServerList
        guard configuration.observability.statisticsIntervalSeconds > 0 else {
            throw StartupError("observability.statisticsIntervalSeconds must be above 0 (readiness and lag come from them), "
                               + "got \(configuration.observability.statisticsIntervalSeconds)")
        }
        let statisticsInterval = Duration.seconds(configuration.observability.statisticsIntervalSeconds)
        let readiness = WorkerReadiness(group: groupId, bootstrap: brokers.joined(separator: ","),
                                        statisticsInterval: statisticsInterval)
        // Signals are watched from the start: a SIGTERM while the brokers are still awaited stops
        // the worker cleanly (exit 0) instead of killing it; from then on it is not ready.
        let shutdownTrigger = GracefulShutdownTrigger()
        let signals = UnixSignal.stream([.sigterm, .sigint])
        let signalWatch = Task {
            for await _ in signals {
                readiness.stopping()
                shutdownTrigger.trigger()
            }
        }
        defer { signalWatch.cancel() }
        // Served first, so /healthz answers (and /readyz says why not) while topics are checked.
        BuildInfo.register(in: metrics, role: S.name.rawValue)
        let operations = try OperationsServer.start(configuration.observability, registry: metrics,
                                                    readiness: { readiness.evaluate() })
        defer { operations?.stop() }
        if let operations {
            logger.notice("serving /metrics, /healthz and /readyz", metadata: [
                "observability.port": .integer(operations.port),
            ])
        }
        let runnerConfiguration = StageRunnerConfiguration(
            topics: topics, maxInFlight: configuration.runner.maxInFlight,
            processingTimeout: .seconds(configuration.runner.recordTimeoutSeconds),
            shutdownGracePeriod: .seconds(configuration.runner.shutdownGraceSeconds))
        try runnerConfiguration.validate()
        let retryPolicy = configuration.retryPolicy
        try retryPolicy.validate()
        let subscription = topics.inputs(of: S.name, retryTiers: retryPolicy.delays.count)

        let needsBrokers = configuration.topics.create || S.Output.partitioning == .inputPartition
        let started = !needsBrokers ? .started : try await StartupGate.run(
            "the brokers at \(brokers.joined(separator: ",")) (topic checks)",
            timeout: .seconds(configuration.kafka.startupTimeoutSeconds), trigger: shutdownTrigger, logger: logger) {
            if configuration.topics.create {
                await TopicProvisioner(bootstrapServers: brokers, properties: configuration.kafka.properties, logger: logger)
                    .ensure(configuration.allTopicNames, partitions: configuration.topics.partitions,
                            replicationFactor: configuration.topics.replicationFactor, configs: topics.creationConfigs)
            }
            if S.Output.partitioning == .inputPartition {
                do {
                    try await CoPartitioningCheck.verify(inputTopic: subscription[0], tierTopics: Array(subscription.dropFirst()),
                                                         outputTopic: topics.output(S.Output.outputTopic), bootstrapServers: brokers,
                                                         properties: configuration.kafka.properties)
                } catch {
                    logger.critical("refusing to start: topic partition counts break co-partitioning",
                                    metadata: [LoggingKeys.errorMessage: .string("\(error)")])
                    throw error
                }
            }
        }
        guard started == .started else { return 0 }

        var consumerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: brokers, consumptionStrategy: .group(id: groupId, topics: subscription))
        consumerConfiguration.clientId = "\(configuration.kafka.clientId)-\(S.name)"
        if !configuration.kafka.groupInstanceId.isEmpty {
            consumerConfiguration.groupInstanceId = "\(configuration.kafka.groupInstanceId)-\(S.name)"
        }
        consumerConfiguration.additionalProperties = configuration.kafka.consumerAdditionalProperties
        consumerConfiguration.autoCommitInterval = .seconds(configuration.kafka.commitIntervalSeconds)
        consumerConfiguration.sessionTimeout = .seconds(configuration.kafka.sessionTimeoutSeconds)
        consumerConfiguration.heartbeatInterval = configuration.kafka.heartbeatInterval
        consumerConfiguration.maxPollInterval = .seconds(configuration.kafka.maxPollIntervalSeconds)
        if configuration.kafka.rebalanceTimeoutSeconds != 0 {  // negative: refused by validate()
            consumerConfiguration.rebalanceTimeout = .seconds(configuration.kafka.rebalanceTimeoutSeconds)
        }
        let kafkaMetrics = KafkaStatisticsMetrics(registry: metrics)
        consumerConfiguration.statisticsInterval = statisticsInterval
        consumerConfiguration.onStatistics = { statistics in
            readiness.update(statistics)
            kafkaMetrics.update(statistics)
        }
        var producerConfiguration = try configuration.kafka.producer(bootstrapServers: brokers, role: S.name.rawValue)
        producerConfiguration.statisticsInterval = statisticsInterval
        producerConfiguration.onStatistics = { kafkaMetrics.updateProducer($0) }
        // Assignor, consumer buffer, revocation timeout and close order: the wiring the broker
        // integration tests use too.
        let worker = try KafkaStageWorker(stage: stage, consumer: consumerConfiguration, producer: producerConfiguration,
                                          configuration: runnerConfiguration, retryPolicy: retryPolicy,
                                          assignmentHook: assignmentHook, logger: logger, metrics: metrics)
        let runner = worker.runner
        metrics.function("receiptd_kafka_consumer_buffer_pauses_total",
                         help: "Times the consumer paused fetching because its buffer of records for the runner was full.",
                         kind: .counter) { [weak worker] in Double(worker?.source.kafkaConsumer.backpressurePauseCount ?? 0) }
        metrics.function("receiptd_kafka_consumer_parked_partitions",
                         help: "Retry-tier partitions left out of fetches while they have nothing to fetch.",
                         kind: .gauge) { [weak worker] in Double(worker?.source.kafkaConsumer.parkedPartitions.count ?? 0) }
        readiness.track(preparing: { [weak runner] in runner?.partitionsBeingPrepared ?? 0 })
        logger.notice("stage worker started", metadata: [
            LoggingKeys.stageName: .string(S.name.rawValue), "kafka.group": .string(groupId),
            LoggingKeys.kafkaTopic: .string(subscription.joined(separator: ",")),
            "kafka.bootstrap": .string(brokers.joined(separator: ",")),
        ])
        let parentWatch = ParentWatch.startIfRequested(logger: logger, shutDown: {
            readiness.stopping()
            shutdownTrigger.trigger()
        })
        defer { parentWatch?.cancel() }
        let reporter = configuration.log.progressIntervalSeconds <= 0 ? nil : Task { [metrics] in
            await WorkerReporter(stage: S.name.rawValue, registry: metrics, readiness: { readiness.evaluate() },
                                 interval: .seconds(configuration.log.progressIntervalSeconds), logger: logger).run()
        }
        defer { reporter?.cancel() }
        var lifecycle = ServiceGroup.Configuration()
        lifecycle.gracefulShutdownSignals = []  // watched above, from the start
        lifecycle.maximumGracefulShutdownDuration = worker.configuration.shutdownGracePeriod + .seconds(10)
        var failure: (any Error)?
        do {
            // The closures are built here, where `S` is concrete, so the runner they call is the
            // compiler's specialization for this stage: a generic type's `Service` conformance would
            // reach the runner through its witness table, whose code is the unspecialized generic
            // one (type metadata looked up at run time, every input and output copied through value
            // witnesses).
            let service = WorkerService(operation: { try await worker.run() }, shutDown: { worker.shutdownGracefully() })
            try await ServiceGroup(services: [service], configuration: lifecycle, logger: logger,
                                 trigger: shutdownTrigger).run()
        } catch {
            failure = error
            logger.error("stage worker failed", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
        }
        logger.notice("stage worker stopped", metadata: [
            LoggingKeys.stageName: .string(S.name.rawValue),
            LoggingKeys.runnerPeakInFlight: .int(Int64(runner.peakInFlight)),
            LoggingKeys.runnerMaxInFlight: .int(Int64(runnerConfiguration.maxInFlight)),
            LoggingKeys.runnerBackpressurePauses: .int(Int64(runner.backpressureEngagements)),
        ])
        return failure == nil ? 0 : 1
    }
}

/// A ``KafkaStageWorker`` as a ``Service``: graceful shutdown maps to the runner's own drain.
/// Not generic: it calls what ``StageWorker/run(_:configuration:logger:assignmentHook:metrics:)``
/// built for its concrete stage.
struct WorkerService: Service {
    let operation: @Sendable () async throws -> Void
    let shutDown: @Sendable () -> Void

    func run() async throws {
        try await withGracefulShutdownHandler(operation: operation, onGracefulShutdown: shutDown)
    }
}

extension WorkerConfiguration {
    /// The pipeline's topic names.
    var pipelineTopics: Topics {
        Topics(submitted: topics.submitted, ingested: topics.ingested, verified: topics.verified,
               entitlementsChanged: topics.entitlements, ownerUpdates: topics.ownerUpdates,
               entitlementState: topics.entitlementState, rejected: topics.rejected, outcomes: topics.outcomes,
               deadLetter: topics.deadLetter, consumptionRequests: topics.consumptionRequests,
               consumptionAnswers: topics.consumptionAnswers, consumptionOutcomes: topics.consumptionOutcomes)
    }

    /// Every topic the pipeline uses, retry tiers included (what workers and `receiptd broker` create).
    var allTopicNames: [String] {
        pipelineTopics.allNames(retryTiers: retry.tierDelaysSeconds.count)
    }

    /// The retry policy `retry.tierDelaysSeconds` describes (validate it before use).
    var retryPolicy: TieredRetryPolicy {
        TieredRetryPolicy(delays: retry.tierDelaysSeconds.map { Duration.seconds($0) })
    }

    /// `kafka.bootstrapServers` split on commas.
    var bootstrapServerList: [String] {
        kafka.bootstrapServers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Every partition a stage's group consumes: its input and retry tiers, `topics.partitions` each.
    func inputPartitions(of stage: StageName) -> [KafkaTopicPartition] {
        pipelineTopics.inputs(of: stage, retryTiers: retry.tierDelaysSeconds.count).flatMap { topic in
            (0..<Int32(topics.partitions)).map { KafkaTopicPartition(topic: topic, partition: $0) }
        }
    }

    func groupId(for stage: StageName) -> String {
        switch stage {
        case .ingest: groups.ingest
        case .verify: groups.verify
        case .fulfil: groups.fulfil
        case .owners: groups.owners
        case .consumption: groups.consumption
        }
    }

    /// The offline JWS verifier this configuration describes.
    func signedDataVerifier() throws -> SignedDataVerifier {
        var configuration = SignedDataVerifierConfiguration()
        if !verify.trustRoots.isEmpty {
            configuration.trustAnchors = try verify.trustRoots.flatMap { try X509Certificate.load(path: $0) }
        }
        configuration.bundleIds = Set(verify.bundleIds)
        configuration.appAppleId = verify.appAppleId > 0 ? verify.appAppleId : nil
        configuration.environment = try CheckCommand.environmentPolicy(verify.environment)
        configuration.limits.verifiedCacheCapacity = verify.verifiedCacheEntries
        return try SignedDataVerifier(configuration: configuration)
    }

    /// The verify stage's verifier: offline JWS always; StoreKit 1 receipts per
    /// `verify.appReceiptMode`; `transactionId` when the App Store Server API is configured.
    /// - Parameters:
    ///   - transport: the HTTP client for Apple's endpoints (one per worker, shared).
    ///   - metrics: where App Store requests are counted (a worker's; nil for one-off checks).
    ///   - requestLimiter: the worker's share of the group's App Store request budgets, if any.
    func submissionVerifier(transport: @autoclosure () throws -> any HTTPTransport,
                            metrics: AppStoreRequestMetrics? = nil,
                            requestLimiter: (any AppStoreRequestLimiter)? = nil) throws -> AppStoreSubmissionVerifier {
        let signed = try signedDataVerifier()
        guard let mode = LegacyReceiptMode(rawValue: verify.appReceiptMode) else {
            throw ValidationError("verify.appReceiptMode must be local, verifyReceipt or serverAPI, got '\(verify.appReceiptMode)'")
        }
        var receipts = AppReceiptVerifierConfiguration()
        if !verify.receiptTrustRoots.isEmpty {
            receipts.trustAnchors = try verify.receiptTrustRoots.flatMap { try X509Certificate.load(path: $0) }
        }
        receipts.bundleIds = Set(verify.bundleIds)
        receipts.environment = try CheckCommand.environmentPolicy(verify.environment)
        let needsHTTP = !verify.serverApi.keyPath.isEmpty || mode == .verifyReceipt
        let http: (any HTTPTransport)? = needsHTTP ? try transport() : nil

        var serverAPI: AppStoreServerAPIClient?
        if let http, !verify.serverApi.keyPath.isEmpty {
            serverAPI = try AppStoreServerAPIClient(configuration: verify.serverApi.clientConfiguration, transport: http,
                                                    requestLimiter: requestLimiter, metrics: metrics)
        } else if mode == .serverAPI {
            throw ValidationError("verify.appReceiptMode serverAPI needs verify.serverApi.keyPath")
        }
        var verifyReceiptClient: VerifyReceiptClient?
        if mode == .verifyReceipt, let http {
            var configuration = VerifyReceiptConfiguration()
            configuration.sharedSecretPath = verify.verifyReceipt.sharedSecretPath.isEmpty ? nil : verify.verifyReceipt.sharedSecretPath
            configuration.productionURL = verify.verifyReceipt.productionURL
            configuration.sandboxURL = verify.verifyReceipt.sandboxURL
            configuration.excludeOldTransactions = verify.verifyReceipt.excludeOldTransactions
            configuration.bundleIds = Set(verify.bundleIds)
            configuration.requestTimeout = .seconds(verify.verifyReceipt.requestTimeoutSeconds)
            verifyReceiptClient = try VerifyReceiptClient(configuration: configuration, transport: http, metrics: metrics)
        }
        let legacy = LegacyReceiptVerification(mode: mode, receiptVerifier: try AppReceiptVerifier(configuration: receipts),
                                               verifyReceipt: verifyReceiptClient)
        return AppStoreSubmissionVerifier(verifier: signed, legacy: legacy, serverAPI: serverAPI)
    }
}

extension Duration {
    /// Whole and fractional seconds.
    static func seconds(_ value: Double) -> Duration { .milliseconds(Int64((value * 1000).rounded())) }
}
