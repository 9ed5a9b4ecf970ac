import AppStore
import Foundation
import Kafka
import Observability
import FakeAppStore
import Pipeline

/// One complete pipeline on the embedded defaults, as `receiptd demo` and `receiptd bench
/// pipeline` run it: the embedded broker in this process, a test PKI generated at start-up
/// (trusted for the run only), a worker configuration file, and stage workers as child
/// processes of this one.
final class PipelineHarness: @unchecked Sendable {
    // @unchecked: mutated only by the command that owns the harness, from one task.
    let directory: String
    let broker: EmbeddedBroker
    let configuration: WorkerConfiguration
    let configPath: String
    let pki: TestPKI
    let forgerPKI: TestPKI
    /// The fake App Store the verify workers call for `transactionId` and `appReceipt` submissions.
    let appStore: FakeAppStore
    private(set) var workers: [WorkerProcess] = []

    /// - Parameters:
    ///   - port: the broker's stable bootstrap port (0 for any free one).
    ///   - partitions: partitions per topic.
    ///   - maxInFlight: records in flight per worker.
    ///   - customize: last changes to the workers' configuration (short retry tiers), applied
    ///     before the broker creates the topics.
    init(port: UInt16, partitions: Int, maxInFlight: Int, bundleId: String,
         customize: (inout WorkerConfiguration) -> Void = { _ in }) throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-demo-XXXXXX").path
        var buffer = Array(template.utf8CString)
        guard mkdtemp(&buffer) != nil else { throw ValidationError("cannot create a temporary directory") }
        directory = String(cString: buffer)

        let now = Date()
        pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400 * 30), validUntil: now.addingTimeInterval(86_400 * 365),
                                   commonNamePrefix: "receiptd demo")
        forgerPKI = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400 * 30), validUntil: now.addingTimeInterval(86_400 * 365),
                                         commonNamePrefix: "receiptd demo")
        let rootPath = directory + "/demo-root.pem"
        try pki.root.pemString.write(toFile: rootPath, atomically: true, encoding: .utf8)

        // The fake App Store (Server API + verifyReceipt) on loopback, with credentials on disk
        // exactly as a deployment would hold Apple's: a .p8 key and a shared-secret file.
        let credentials = try FakeAppStoreCredentials.generate(now: now)
        let files = try credentials.write(to: directory + "/appstore")
        appStore = try FakeAppStore(configuration: FakeAppStoreConfiguration(bundleId: bundleId, credentials: credentials))

        var configuration = WorkerConfiguration()
        configuration.topics.partitions = partitions
        configuration.topics.create = false
        configuration.runner.maxInFlight = maxInFlight
        configuration.runner.shutdownGraceSeconds = 10
        configuration.verify.trustRoots = [rootPath, files.rootCertificate]
        configuration.verify.appReceiptMode = "verifyReceipt"
        configuration.verify.serverApi = .init(keyPath: files.signingKey, keyId: credentials.keyId, issuerId: credentials.issuerId,
                                               bundleId: bundleId, environment: "production",
                                               productionBaseURL: appStore.productionBaseURL, sandboxBaseURL: appStore.sandboxBaseURL,
                                               requestTimeoutSeconds: 5)
        configuration.verify.verifyReceipt = .init(sharedSecretPath: files.sharedSecret ?? "",
                                                   productionURL: appStore.productionVerifyReceiptURL,
                                                   sandboxURL: appStore.sandboxVerifyReceiptURL,
                                                   excludeOldTransactions: false, requestTimeoutSeconds: 5)
        configuration.verify.bundleIds = [bundleId]
        configuration.fulfil.catalogue = Self.cataloguePath()
        // The production ledger: fulfil workers rebuild each partition's ledger from
        // entitlements.changed on assignment (every topic has the same partition count here).
        configuration.fulfil.ledger = "kafka"
        // A second user's claim on a purchase moves it, so the runs exercise transfers.
        configuration.fulfil.transferPolicy = "transfer"
        configuration.log.level = "notice"
        customize(&configuration)
        broker = try EmbeddedBroker(brokerCount: 1, port: port, configuration: configuration)
        configuration.kafka.bootstrapServers = broker.bootstrapServers
        self.configuration = configuration
        configPath = directory + "/receiptd.demo.json"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(configuration).write(to: URL(fileURLWithPath: configPath))
    }

    /// `Config/catalogue.json` from the working directory or next to the binary's checkout.
    static func cataloguePath() -> String {
        let candidates = [FileManager.default.currentDirectoryPath + "/Config/catalogue.json",
                          URL(fileURLWithPath: WorkerProcess.executablePath).deletingLastPathComponent()
                              .appendingPathComponent("../../Config/catalogue.json").standardized.path]
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
    }

    /// Starts `count` worker processes of `stage`.
    @discardableResult
    func startWorkers(_ stage: StageName, count: Int) throws -> [WorkerProcess] {
        var started: [WorkerProcess] = []
        for index in 0..<count {
            let worker = WorkerProcess(name: "\(stage)-\(index + 1)", arguments: [stage.rawValue, "--config", configPath],
                                       logPath: "\(directory)/\(stage)-\(index + 1).log")
            try worker.start()
            workers.append(worker)
            started.append(worker)
        }
        return started
    }

    /// A producer for submissions.
    func makeProducer() throws -> KafkaProducer {
        var configuration = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
        configuration.clientId = "receiptd-generator"
        configuration.linger = .milliseconds(10)
        return try KafkaProducer(configuration: configuration)
    }

    /// A tally over the terminal topics.
    func makeTally() throws -> OutcomeTally {
        try OutcomeTally(bootstrapServers: [broker.bootstrapServers], topics: configuration.pipelineTopics,
                         partitions: configuration.topics.partitions)
    }

    /// The end-of-run check of the owner view on this harness's broker.
    func ownerStateCheck(stallTimeout: Duration) -> OwnerStateCheck {
        OwnerStateCheck(bootstrapServers: [broker.bootstrapServers], topics: configuration.pipelineTopics,
                        ownersGroup: configuration.groupId(for: .owners), retryTiers: configuration.retry.tierDelaysSeconds.count,
                        partitions: configuration.topics.partitions, stallTimeout: stallTimeout)
    }

    /// SIGTERM to every worker, then waits for them (killing stragglers).
    /// - Returns: how many exited with status 0.
    func stopWorkers(timeout: Duration = .seconds(30)) async -> Int {
        for worker in workers { worker.send(SIGTERM) }
        var clean = 0
        for worker in workers where await worker.waitForExit(timeout: timeout) == 0 { clean += 1 }
        return clean
    }

    /// Stops the broker and removes the temporary directory (unless `keep`).
    func close(keep: Bool) {
        appStore.stop()
        broker.cluster.close()
        if !keep { try? FileManager.default.removeItem(atPath: directory) }
    }
}
