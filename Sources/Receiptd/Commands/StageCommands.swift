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
        usage: "receiptd fulfil [options]\n\n" + StageWorkerOptions.usage)
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
        return try await StageWorker.run(FulfilStage(catalogue: catalogue, ledger: InMemoryFulfilmentLedger()),
                                         configuration: configuration,
                                         logger: makeLogger(configuration, label: "receiptd.fulfil"))
    }
}
