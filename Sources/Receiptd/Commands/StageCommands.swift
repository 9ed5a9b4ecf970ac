import Foundation
import HTTP
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
        let verifier = try configuration.submissionVerifier(transport: try CurlHTTPClient())
        return try await StageWorker.run(VerifyStage(verifier: verifier), configuration: configuration,
                                         logger: makeLogger(configuration, label: "receiptd.verify"))
    }
}

/// `receiptd fulfil`: maps verified transactions through the catalogue to entitlement changes.
struct FulfilCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "fulfil", abstract: "Run a fulfil worker (receipts.verified -> entitlements.changed)",
        usage: "receiptd fulfil [options]\n\n" + StageWorkerOptions.usage + """


        fulfil.ledger kafka (the default) keeps no local state: entitlement changes go to the partition
        number of their receipts.verified record, and each assigned partition's ledger is rebuilt from
        entitlements.changed before its records are processed. The worker refuses to start unless
        entitlements.changed has at least as many partitions as receipts.verified and every retry tier
        exactly as many. fulfil.ledger memory remembers only what this process emitted (tests, demos).
        """)
    let options: StageWorkerOptions
    init(arguments: [String]) throws { options = try StageWorkerOptions(arguments: arguments) }

    func run() async throws -> Int32 {
        let configuration = try options.load(stage: .fulfil)
        let catalogue: ProductCatalogue
        do {
            catalogue = try ProductCatalogue(contentsOfFile: configuration.fulfil.catalogue)
        } catch {
            throw ValidationError("cannot load the product catalogue \(configuration.fulfil.catalogue): \(error)")
        }
        let logger = makeLogger(configuration, label: "receiptd.fulfil")
        switch configuration.fulfil.ledger {
        case "kafka":
            let reader = KafkaPartitionLogReader(bootstrapServers: configuration.bootstrapServerList,
                                                 properties: configuration.kafka.properties,
                                                 clientId: "\(configuration.kafka.clientId)-fulfil-ledger")
            let ledger = KafkaFulfilmentLedger(reader: reader, topic: configuration.topics.entitlements, logger: logger)
            return try await StageWorker.run(FulfilStage(catalogue: catalogue, ledger: ledger), configuration: configuration,
                                             logger: logger, assignmentHook: ledger)
        case "memory":
            return try await StageWorker.run(FulfilStage(catalogue: catalogue, ledger: InMemoryFulfilmentLedger()),
                                             configuration: configuration, logger: logger)
        default:
            throw ValidationError("fulfil.ledger must be kafka or memory, got '\(configuration.fulfil.ledger)'")
        }
    }
}
