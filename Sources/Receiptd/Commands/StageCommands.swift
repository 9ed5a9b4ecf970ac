import AppStore
import Foundation
import HTTP
import Kafka
import Observability
import Pipeline

/// `receiptd ingest`: validates and normalises `receipt-submitted/v1`, keys it by owner.
struct IngestCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "ingest", abstract: "Run an ingest worker (receipts.submitted -> receipts.ingested)",
        usage: "receiptd ingest [options]\n\n" + StageWorkerOptions.usage)
    let options: StageWorkerOptions
    init(arguments: [String]) throws { options = try StageWorkerOptions(arguments: arguments) }

    func run() async throws -> Int32 {
        let configuration = try options.load(stage: .ingest)
        let ingest = IngestConfiguration(maxRecordBytes: configuration.ingest.maxRecordBytes)
        try ingest.validate()
        return try await StageWorker.run(IngestStage(configuration: ingest), configuration: configuration,
                                         logger: makeLogger(configuration, label: "receiptd.ingest"))
    }
}

/// `receiptd verify`: proves each submission genuine (offline JWS verification for StoreKit 2).
struct VerifyCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Run a verify worker (receipts.ingested -> receipts.verified)",
        usage: "receiptd verify [options]\n\n" + StageWorkerOptions.usage)
    let options: StageWorkerOptions
    init(arguments: [String]) throws { options = try StageWorkerOptions(arguments: arguments) }

    func run() async throws -> Int32 {
        let configuration = try options.load(stage: .verify)
        let logger = makeLogger(configuration, label: "receiptd.verify")
        let budget = try configuration.requestBudget()
        let verifier = try configuration.submissionVerifier(transport: try CurlHTTPClient(),
                                                            metrics: AppStoreRequestMetrics(registry: .shared),
                                                            requestLimiter: budget)
        let signed = verifier.signedData
        MetricsRegistry.shared.function("receiptd_verified_jws_cache_hits_total", help: "JWS answered from the verified-JWS cache.",
                                        kind: .counter) { Double(signed.verifiedCacheStatistics.hits) }
        MetricsRegistry.shared.function("receiptd_verified_jws_cache_misses_total", help: "JWS verified in full (not in the cache).",
                                        kind: .counter) { Double(signed.verifiedCacheStatistics.misses) }
        let share = try await configuration.budgetShare(budget, inputTopic: configuration.topics.ingested, logger: logger)
        return try await StageWorker.run(VerifyStage(verifier: verifier), configuration: configuration,
                                         logger: logger, assignmentHook: share)
    }
}

/// `receiptd fulfil`: applies verified transactions to their purchases' lifecycle and publishes
/// the resulting entitlement changes.
struct FulfilCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "fulfil",
        abstract: "Run a fulfil worker (receipts.verified -> entitlements.changed, entitlements.owner-updates)",
        usage: "receiptd fulfil [options]\n\n" + StageWorkerOptions.usage + """


        fulfil.ledger kafka (the default) keeps no local state: entitlement changes go to the partition
        number of their receipts.verified record, and each assigned partition's purchase states are
        rebuilt from entitlements.changed before its records are processed. The worker refuses to start
        unless entitlements.changed has at least as many partitions as receipts.verified and every retry
        tier exactly as many. fulfil.ledger memory remembers only what this process applied (tests, demos).
        Policies: fulfil.transferPolicy (keep|transfer), fulfil.appAccountTokenBinding (off|userIdIsToken),
        fulfil.sandboxPolicy (grant|tag|reject), fulfil.billingRetryAccess (true|false).
        Run `receiptd owners` beside it: it folds the owner updates into entitlements.state.
        """)
    let options: StageWorkerOptions
    init(arguments: [String]) throws { options = try StageWorkerOptions(arguments: arguments) }

    func run() async throws -> Int32 {
        let configuration = try options.load(stage: .fulfil)
        let catalogue = try configuration.productCatalogue()
        let policy = try configuration.fulfilmentPolicy()
        let logger = makeLogger(configuration, label: "receiptd.fulfil")
        switch configuration.fulfil.ledger {
        case "kafka":
            let ledger = KeyedStateStore.purchaseLedger(reader: configuration.stateReader(for: "fulfil-ledger"),
                                                        topic: configuration.topics.entitlements, logger: logger)
            return try await StageWorker.run(FulfilStage(catalogue: catalogue, policy: policy, ledger: ledger,
                                                         publishConsumptionRequests: configuration.fulfil.consumptionRequests),
                                             configuration: configuration, logger: logger, assignmentHook: ledger)
        case "memory":
            return try await StageWorker.run(FulfilStage(catalogue: catalogue, policy: policy, ledger: KeyedStateStore(),
                                                         publishConsumptionRequests: configuration.fulfil.consumptionRequests),
                                             configuration: configuration, logger: logger)
        default:
            throw StartupError("fulfil.ledger must be kafka or memory, got '\(configuration.fulfil.ledger)'")
        }
    }
}

/// `receiptd consumption`: sends the backend's answers to Apple's refund consumption requests.
struct ConsumptionCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "consumption",
        abstract: "Send answers to refund consumption requests to Apple (consumption.answers -> consumption.outcomes)",
        usage: "receiptd consumption [options]\n\n" + StageWorkerOptions.usage + """


        With fulfil.consumptionRequests true, fulfil publishes each verified CONSUMPTION_REQUEST to
        topics.consumptionRequests (consumption-request/v1: transaction, owner, deadline = 12 h after Apple
        signed it). The backend answers on topics.consumptionAnswers (consumption-answer/v1); this worker
        sends each answer with Send Consumption Information (verify.serverApi.* credentials, its request
        budgets) and writes one consumption-outcome/v1 per answer: answered, expired (after the deadline,
        not sent) or failed (Apple refused it; reason). Transient failures use the retry tiers.
        """)
    let options: StageWorkerOptions
    init(arguments: [String]) throws { options = try StageWorkerOptions(arguments: arguments) }

    func run() async throws -> Int32 {
        let configuration = try options.load(stage: .consumption)
        let logger = makeLogger(configuration, label: "receiptd.consumption")
        let api = configuration.verify.serverApi
        guard !api.keyPath.isEmpty else { throw ValidationError("receiptd consumption needs verify.serverApi.keyPath (and keyId, issuerId, bundleId)") }
        var client = AppStoreServerAPIConfiguration(signingKeyPath: api.keyPath, keyId: api.keyId, issuerId: api.issuerId,
                                                    bundleId: api.bundleId)
        client.productionBaseURL = api.productionBaseURL
        client.sandboxBaseURL = api.sandboxBaseURL
        client.requestTimeout = .seconds(api.requestTimeoutSeconds)
        let budget = try configuration.requestBudget()
        let stage = ConsumptionStage(client: try AppStoreServerAPIClient(configuration: client, transport: try CurlHTTPClient(),
                                                                         requestLimiter: budget))
        let share = try await configuration.budgetShare(budget, inputTopic: configuration.topics.consumptionAnswers, logger: logger)
        return try await StageWorker.run(stage, configuration: configuration, logger: logger, assignmentHook: share)
    }
}

/// `receiptd owners`: folds fulfil's owner updates into the per-owner view (part of fulfil's deployment).
struct OwnersCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "owners", abstract: "Run an owner-view worker (entitlements.owner-updates -> entitlements.state)",
        usage: "receiptd owners [options]\n\n" + StageWorkerOptions.usage + """


        The owner view keeps no local state: each entitlements.owner-updates partition's owner states are
        rebuilt from the same partition of entitlements.state (compacted) when it is assigned. The worker
        refuses to start unless entitlements.state has at least as many partitions as the input.
        """)
    let options: StageWorkerOptions
    init(arguments: [String]) throws { options = try StageWorkerOptions(arguments: arguments) }

    func run() async throws -> Int32 {
        let configuration = try options.load(stage: .owners)
        let logger = makeLogger(configuration, label: "receiptd.owners")
        let store = KeyedStateStore.ownerView(reader: configuration.stateReader(for: "owners-state"),
                                              topic: configuration.topics.entitlementState, logger: logger)
        return try await StageWorker.run(OwnersStage(store: store), configuration: configuration, logger: logger,
                                         assignmentHook: store)
    }
}

extension WorkerConfiguration {
    /// The verify group's App Store request budgets (`verify.serverApi.budgets`), nil when none is set.
    /// - Throws: `ValidationError` naming the key.
    func requestBudget() throws -> SharedRequestBudget? {
        let api = verify.serverApi
        guard !api.budgets.isEmpty else { return nil }
        var budgets: [AppStoreEndpoint: AppStoreBudget] = [:]
        for (name, budget) in api.budgets {
            guard let endpoint = AppStoreEndpoint(rawValue: name), AppStoreEndpoint.serverAPI.contains(endpoint) else {
                throw ValidationError("verify.serverApi.budgets.\(name): unknown endpoint (one of "
                                      + AppStoreEndpoint.serverAPI.map(\.rawValue).joined(separator: ", ") + ")")
            }
            guard budget.requests >= 1, budget.windowSeconds > 0 else {
                throw ValidationError("verify.serverApi.budgets.\(name): requests must be >= 1 and windowSeconds > 0")
            }
            budgets[endpoint] = budget
        }
        guard api.budgetMaxWaitSeconds >= 0, api.budgetMaxWaitSeconds < runner.recordTimeoutSeconds else {
            throw ValidationError("verify.serverApi.budgetMaxWaitSeconds must be in 0..<runner.recordTimeoutSeconds "
                                  + "(\(runner.recordTimeoutSeconds)), got \(api.budgetMaxWaitSeconds)")
        }
        guard api.budgetMarginSeconds >= 0 else { throw ValidationError("verify.serverApi.budgetMarginSeconds must be >= 0") }
        return SharedRequestBudget(budgets: budgets, margin: .seconds(api.budgetMarginSeconds),
                                   maxWait: .seconds(api.budgetMaxWaitSeconds))
    }

    /// The hook that gives this worker its partitions' share of `budget` (nil without a budget).
    func budgetShare(_ budget: SharedRequestBudget?, inputTopic: String, logger: Logger) async throws -> RequestBudgetShare? {
        guard let budget else { return nil }
        let admin = try KafkaAdminClient(bootstrapServers: bootstrapServerList, additionalProperties: kafka.properties)
        let partitions = (try? await admin.partitionCount(topic: inputTopic)) ?? topics.partitions
        logger.notice("App Store request budgets shared by partition", metadata: [
            LoggingKeys.kafkaTopic: .string(inputTopic), "kafka.partitions": .int(Int64(partitions)),
        ])
        return RequestBudgetShare(budget: budget, inputTopic: inputTopic, totalPartitions: partitions)
    }

    /// The product catalogue `fulfil.catalogue` names (validated).
    /// - Throws: `ValidationError` naming the file and what is wrong with it.
    func productCatalogue() throws -> ProductCatalogue {
        do {
            return try ProductCatalogue(contentsOfFile: fulfil.catalogue)
        } catch {
            let relative = fulfil.catalogue.hasPrefix("/") ? ""
                : " (relative to the working directory \(FileManager.default.currentDirectoryPath); a path in a "
                + "configuration file is relative to that file)"
            throw StartupError("cannot load the product catalogue fulfil.catalogue \(fulfil.catalogue)\(relative): \(error)")
        }
    }

    /// The fulfilment policies `fulfil.*` name (validated).
    func fulfilmentPolicy() throws -> FulfilmentPolicy {
        try FulfilmentPolicy(transfer: fulfil.transferPolicy, appAccountToken: fulfil.appAccountTokenBinding,
                             sandbox: fulfil.sandboxPolicy, billingRetryAccess: fulfil.billingRetryAccess)
    }

    /// A reader of a co-partitioned state topic, with its own client id.
    func stateReader(for role: String) -> KafkaPartitionLogReader {
        KafkaPartitionLogReader(bootstrapServers: bootstrapServerList, properties: kafka.properties,
                                clientId: "\(kafka.clientId)-\(role)")
    }
}
