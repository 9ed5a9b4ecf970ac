import AppStore
import Foundation
import HTTP
import Kafka
import Observability
import Pipeline

/// `receiptd reconcile notifications|subscriptions`: recovers what Apple told (or would tell)
/// receiptd but the pipeline may have missed, by asking the App Store Server API and feeding the
/// answers through the normal pipeline, where de-duplication makes repeats harmless.
struct ReconcileCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Republish missed App Store notifications or subscription states (Server API -> receipts.submitted)",
        usage: """
        receiptd reconcile notifications --since T [--until T] [--only-failures] [options]
        receiptd reconcile subscriptions [--transactions FILE] [options]

          --since T, --until T   RFC 3339 instants or relative to now, e.g. -26h (notifications; --until
                                 defaults to now; Apple keeps 180 days; resolved once per checkpoint)
          --only-failures        only notifications Apple never delivered successfully
          --transactions FILE    lines "originalTransactionId userId" (subscriptions; default: every
                                 auto-renewable purchase in the owner view, entitlements.state)
          --rate N               App Store requests per second (default 5)
          --dry-run              ask Apple and count, publish nothing
          --checkpoint FILE      save progress after every page or purchase; a rerun with the same
                                 file and arguments resumes where the last one stopped
          --config FILE, --brokers LIST   as for the workers (verify.serverApi.* holds the API key)

        Notifications are republished exactly as `receiptd notifications` publishes them (same submission
        id and key); subscriptions as signedTransaction submissions of the purchase's recorded owner.
        Environments: verify.environment (production, sandbox, or any = both). Progress and ETA go to
        standard error, the summary to standard output. Exit 0 when finished, 1 on failure (rerun to resume).
        """)

    enum Mode: String { case notifications, subscriptions }

    var mode: Mode
    var since: Date?
    var until: Date?
    /// As given (a relative `-26h` is resolved once, at the first run, and kept in the checkpoint).
    var sinceText: String?
    var untilText: String?
    var onlyFailures = false
    var transactionsFile: String?
    var rate = 5
    var dryRun = false
    var checkpointPath: String?
    var configFiles: [String] = []
    var brokers: String?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--since", "--until", "--transactions", "--rate", "--checkpoint",
                                                             "--config", "--brokers"],
                                        flags: ["--only-failures", "--dry-run"])
        guard let first = parser.positionals.first, let mode = Mode(rawValue: first), parser.positionals.count == 1 else {
            throw ValidationError("expected `notifications` or `subscriptions`")
        }
        self.mode = mode
        let now = Date()
        func instant(_ name: String) throws -> Date? {
            guard let raw = parser.option(name) else { return nil }
            guard let date = Self.instant(raw, now: now) else {
                throw ValidationError("\(name) must be RFC 3339 or relative to now (-26h, -90m, -2d), got '\(raw)'")
            }
            return date
        }
        since = try instant("--since")
        until = try instant("--until")
        sinceText = parser.option("--since")
        untilText = parser.option("--until")
        onlyFailures = parser.flag("--only-failures")
        transactionsFile = parser.option("--transactions")
        rate = try parser.integer("--rate", in: 1...10_000) ?? rate
        dryRun = parser.flag("--dry-run")
        checkpointPath = parser.option("--checkpoint")
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
        switch mode {
        case .notifications:
            guard let since else { throw ValidationError("reconcile notifications needs --since") }
            if let until, until <= since { throw ValidationError("--until must be after --since") }
            guard transactionsFile == nil else { throw ValidationError("--transactions is for reconcile subscriptions") }
        case .subscriptions:
            guard since == nil, until == nil, !onlyFailures else {
                throw ValidationError("--since, --until and --only-failures are for reconcile notifications")
            }
        }
    }

    func run() async throws -> Int32 {
        let configuration = try ConfigLoader.standard(files: configFiles, brokers: brokers).load()
        let logger = makeLogger(configuration, label: "receiptd.reconcile")
        let api = configuration.verify.serverApi
        guard !api.keyPath.isEmpty else { throw ValidationError("reconcile needs verify.serverApi.keyPath (and keyId, issuerId, bundleId)") }
        let limiter = SharedRequestBudget(budgets: Dictionary(uniqueKeysWithValues: AppStoreEndpoint.serverAPI.map {
            ($0, AppStoreBudget(requests: rate, windowSeconds: 1))
        }), margin: .zero, maxWait: .seconds(3600))
        let http = try CurlHTTPClient()
        let client = try AppStoreServerAPIClient(configuration: api.clientConfiguration, transport: http, requestLimiter: limiter)

        var sink: KafkaRecordSink?
        if !dryRun {
            sink = try KafkaRecordSink(configuration: configuration.kafka.producer(
                bootstrapServers: configuration.bootstrapServerList, role: "reconcile"))
        }
        let topic = configuration.topics.submitted
        let parameters = self.parameters
        var checkpoint = try ReconcileCheckpoint.load(checkpointPath, parameters: parameters)
        if checkpoint.finished {
            printError("reconcile \(mode.rawValue): the checkpoint says this run already finished; nothing to do")
        }
        let path = checkpointPath
        var progress = ReconcileProgress(label: mode.rawValue)
        var failure: (any Error)?
        do {
            switch mode {
            case .notifications:
                let environments = try Self.environments(configuration.verify.environment)
                if checkpoint.endDate == nil { checkpoint.endDate = until ?? Date() }
                if checkpoint.startDate == nil { checkpoint.startDate = since }
                let request = NotificationHistoryRequest(startDate: checkpoint.startDate!, endDate: checkpoint.endDate!,
                                                         onlyFailures: onlyFailures)
                let publish: (([AcceptedNotification]) async throws -> Void)? = sink.map { sink in
                    { batch in try await sink.send(batch.map { OutboundRecord(topic: topic, key: Array($0.key.utf8), value: $0.value) }) }
                }
                let reconciler = NotificationReconciler(
                    environments: environments, request: request,
                    fetch: { try await client.getNotificationHistory($0, paginationToken: $1, environment: $2) }, publish: publish)
                try await reconciler.run(&checkpoint, save: { try $0.save(path) }, progress: &progress)
            case .subscriptions:
                let purchases = try await subscriptionPurchases(configuration)
                let publish: (([(key: String, value: [UInt8])]) async throws -> Void)? = sink.map { sink in
                    { batch in try await sink.send(batch.map { OutboundRecord(topic: topic, key: Array($0.key.utf8), value: $0.value) }) }
                }
                let reconciler = SubscriptionReconciler(
                    purchases: purchases, fetch: { try await client.getAllSubscriptionStatuses(transactionId: $0) }, publish: publish)
                try await reconciler.run(&checkpoint, save: { try $0.save(path) }, progress: &progress)
            }
        } catch {
            failure = error
            logger.error("reconcile stopped", metadata: [LoggingKeys.errorMessage: .string("\(error)")])
        }
        progress.report(checkpoint, fraction: checkpoint.finished ? 1 : nil, force: true)
        await sink?.close()
        await http.shutdownAndWait()
        print("""
        receiptd reconcile \(mode.rawValue) summary\(dryRun ? " (dry run: nothing published)" : "")
          pages or purchases  \(checkpoint.pages)
          seen                \(checkpoint.seen)
          published           \(checkpoint.published)
          skipped             \(checkpoint.skipped)
          failed              \(checkpoint.failed)
          result              \(failure == nil ? "finished" : "stopped: \(failure!) (rerun with the same --checkpoint to resume)")
        """)
        return failure == nil ? 0 : 1
    }

    /// What identifies this run in its checkpoint.
    var parameters: [String: String] {
        var p = ["mode": mode.rawValue, "dryRun": String(dryRun)]
        if let sinceText { p["since"] = sinceText }
        if let untilText { p["until"] = untilText }
        if onlyFailures { p["onlyFailures"] = "true" }
        if let transactionsFile { p["transactions"] = transactionsFile }
        return p
    }

    /// An RFC 3339 instant, or `-<n>d|h|m|s` before `now`.
    static func instant(_ text: String, now: Date) -> Date? {
        if let date = ContractCoding.date(from: text) { return date }
        guard text.hasPrefix("-"), let unit = text.last, let amount = Double(text.dropFirst().dropLast()), amount >= 0 else { return nil }
        let seconds: Double
        switch unit {
        case "d": seconds = amount * 86_400
        case "h": seconds = amount * 3600
        case "m": seconds = amount * 60
        case "s": seconds = amount
        default: return nil
        }
        return now.addingTimeInterval(-seconds)
    }

    static func environments(_ policy: String) throws -> [AppStoreEnvironment] {
        switch policy.lowercased() {
        case "production": [.production]
        case "sandbox": [.sandbox]
        case "any": [.production, .sandbox]
        default: throw ValidationError("verify.environment must be production, sandbox or any, got '\(policy)'")
        }
    }

    /// The purchases to ask about: the file's lines, or every auto-renewable purchase of the owner view.
    private func subscriptionPurchases(_ configuration: WorkerConfiguration) async throws -> [SubscriptionReconciler.Purchase] {
        if let transactionsFile {
            guard let text = try? String(contentsOfFile: transactionsFile, encoding: .utf8) else {
                throw ValidationError("cannot read --transactions \(transactionsFile)")
            }
            let bundleId = configuration.verify.serverApi.bundleId
            return try text.split(separator: "\n").enumerated().compactMap { index, line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                if fields.isEmpty || fields[0].hasPrefix("#") { return nil }
                guard fields.count == 2 else {
                    throw ValidationError("\(transactionsFile):\(index + 1): expected \"originalTransactionId userId\"")
                }
                return SubscriptionReconciler.Purchase(originalTransactionId: fields[0], bundleId: bundleId, userId: fields[1])
            }
        }
        let reader = configuration.stateReader(for: "reconcile")
        let admin = try KafkaAdminClient(bootstrapServers: configuration.bootstrapServerList,
                                         additionalProperties: configuration.kafka.properties)
        let partitions = try await admin.partitionCount(topic: configuration.topics.entitlementState)
        var latest: [String: EntitlementState] = [:]
        try await reader.read(topic: configuration.topics.entitlementState, partitions: (0..<Int32(partitions)).map { $0 }) { record in
            guard let key = record.key.map({ String(decoding: $0, as: UTF8.self) }),
                  let state = try? ContractCoding.decode(EntitlementState.self, from: record.value) else { return }
            latest[key] = state
        }
        var seen: Set<String> = []
        var purchases: [SubscriptionReconciler.Purchase] = []
        for state in latest.values.sorted(by: { $0.recordKey < $1.recordKey }) {
            for purchase in state.purchases where purchase.productType == .autoRenewable && seen.insert(purchase.originalTransactionId).inserted {
                purchases.append(.init(originalTransactionId: purchase.originalTransactionId, bundleId: state.bundleId, userId: state.userId))
            }
        }
        return purchases
    }
}
