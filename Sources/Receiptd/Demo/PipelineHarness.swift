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
    let broker: EmbeddedBroker
    let configuration: WorkerConfiguration
    /// The stage workers, their configuration file and logs, and the run's other files.
    let fleet: WorkerFleet
    let pki: TestPKI
    let forgerPKI: TestPKI
    /// The fake App Store the verify workers call for `transactionId` and `appReceipt` submissions.
    let appStore: FakeAppStore

    /// - Parameters:
    ///   - port: the broker's stable bootstrap port (0 for any free one).
    ///   - partitions: partitions per topic.
    ///   - maxInFlight: records in flight per worker.
    ///   - customize: last changes to the workers' configuration (short retry tiers), applied
    ///     before the broker creates the topics.
    init(port: UInt16, partitions: Int, maxInFlight: Int, bundleId: String,
         customize: (inout WorkerConfiguration) -> Void = { _ in }) throws {
        fleet = try WorkerFleet(prefix: "receiptd-demo", configName: "receiptd.demo.json")
        let directory = fleet.directory

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
        guard FileManager.default.fileExists(atPath: configuration.fulfil.catalogue) else {
            // Checked here: fulfil workers would otherwise exit at start and the run would only stall.
            throw ValidationError("the demo catalogue \(configuration.fulfil.catalogue) does not exist; run receiptd from "
                                  + "the repository root (or from a binary built in its .build directory)")
        }
        // The production ledger: fulfil workers rebuild each partition's ledger from
        // entitlements.changed on assignment (every topic has the same partition count here).
        configuration.fulfil.ledger = "kafka"
        // A second user's claim on a purchase moves it, so the runs exercise transfers.
        configuration.fulfil.transferPolicy = "transfer"
        configuration.log.level = "notice"
        customize(&configuration)
        broker = try EmbeddedBroker(brokerCount: 1, port: port, configuration: configuration)
        configuration = broker.workerConfiguration(configuration)
        self.configuration = configuration
        try fleet.writeConfiguration(configuration)
    }

    /// The directory holding the workers' logs and configuration, the demo root and App Store credentials.
    var directory: String { fleet.directory }
    var workers: [WorkerProcess] { fleet.workers }

    /// `Config/catalogue.json` from the working directory or next to the binary's checkout.
    static func cataloguePath() -> String {
        let candidates = [FileManager.default.currentDirectoryPath + "/Config/catalogue.json",
                          URL(fileURLWithPath: WorkerProcess.executablePath).deletingLastPathComponent()
                              .appendingPathComponent("../../Config/catalogue.json").standardized.path]
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
    }

    /// Whether a worker has exited although nobody stopped it: the check for polling loops, which
    /// reads no log (``exitedWorkers`` says which and why).
    var hasExitedWorker: Bool {
        fleet.workers.contains { $0.exitIfEnded() != nil }
    }

    /// Workers that have exited although nobody stopped them, with how and their logs' last lines
    /// ("fulfil-1 (exit status 1): error: ...").
    var exitedWorkers: [String] {
        fleet.workers.compactMap { worker in
            worker.exitIfEnded().map { "\(worker.name) (\($0))" + (worker.lastLogLine.map { ": \($0)" } ?? "") }
        }.sorted()
    }

    /// Starts `count` worker processes of `stage`.
    @discardableResult
    func startWorkers(_ stage: StageName, count: Int) throws -> [WorkerProcess] {
        try fleet.start(stage, count: count)
    }

    /// A producer for submissions.
    func makeProducer() throws -> KafkaProducer {
        try KafkaProducer(configuration: configuration.kafka.producer(bootstrapServers: [broker.bootstrapServers], role: "generator"))
    }

    /// A tally over the terminal topics.
    func makeTally() throws -> OutcomeTally {
        try OutcomeTally(bootstrapServers: [broker.bootstrapServers], topics: configuration.pipelineTopics,
                         partitions: configuration.topics.partitions, properties: configuration.kafka.consumerAdditionalProperties)
    }

    /// The end-of-run check of the owner view on this harness's broker.
    func ownerStateCheck(stallTimeout: Duration) -> OwnerStateCheck {
        OwnerStateCheck(bootstrapServers: [broker.bootstrapServers], topics: configuration.pipelineTopics,
                        ownersGroup: configuration.groupId(for: .owners), ownersInputs: configuration.inputPartitions(of: .owners),
                        partitions: configuration.topics.partitions, stallTimeout: stallTimeout)
    }

    /// Stops every worker (``WorkerFleet/stop(timeout:)``). - Returns: how many exited with status 0.
    func stopWorkers(timeout: Duration = .seconds(30)) async -> Int {
        await fleet.stop(timeout: timeout)
    }

    /// Stops the broker and removes the temporary directory (unless `keep`).
    func close(keep: Bool) {
        appStore.stop()
        broker.cluster.close()
        if !keep { fleet.remove() }
    }
}
