import AppStore
import Foundation
import HTTP
import Observability
import Pipeline

/// `receiptd check`: the ingest and verify logic of the pipeline without Kafka, for operators
/// ("why was this rejected?") and for tests. One `receipt-submitted/v1` JSON line in, one result
/// line out, in input order.
struct CheckCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Run ingest + verify on receipt-submitted JSON lines, without Kafka",
        usage: """
        receiptd check [FILE|-] [--trust-root FILE]... [--bundle-id ID]... [--app-apple-id N]
                       [--environment production|sandbox|any] [--receipt-mode local|verifyReceipt|serverAPI]
                       [--receipt-trust-root FILE]... [--config FILE]...

          FILE                 receipt-submitted/v1 JSON lines (default: standard input)
          --trust-root FILE    trust anchor, PEM or DER (repeatable; replaces the bundled Apple Root CA - G3)
          --bundle-id ID       accepted bundle id (repeatable; default: any)
          --app-apple-id N     the app's Apple id, checked on Production data
          --environment ENV    production, sandbox or any (default any)
          --receipt-mode M     how StoreKit 1 appReceipt lines are verified (default local: PKCS#7 here)
          --receipt-trust-root FILE  trust anchor for StoreKit 1 receipts (replaces the bundled Apple Inc. Root)
          --config FILE        worker configuration (verify.*: App Store Server API key for transactionId
                               lines, verifyReceipt endpoint, ...); flags override it

        Writes one JSON line per input line: {"submissionId", "outcome": "verified"|"rejected"|"retry",
        "reason", "detail", "transactions": [...]}; dates are RFC 3339 UTC or null. Exits 0 once
        every line was processed, whatever the outcomes.
        """)

    var input: String?
    var trustRoots: [String]
    var bundleIds: [String]
    var appAppleId: Int64?
    var environment: String?
    var receiptMode: String?
    var receiptTrustRoots: [String]
    var configFiles: [String]

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--trust-root", "--bundle-id", "--app-apple-id", "--environment",
                                                             "--receipt-mode", "--receipt-trust-root", "--config"])
        guard parser.positionals.count <= 1 else { throw ValidationError("at most one input file, got \(parser.positionals.count)") }
        input = parser.positionals.first.flatMap { $0 == "-" ? nil : $0 }
        trustRoots = parser.options("--trust-root")
        bundleIds = parser.options("--bundle-id")
        if let raw = parser.option("--app-apple-id") {
            guard let id = Int64(raw), id > 0 else { throw ValidationError("--app-apple-id must be a positive integer, got '\(raw)'") }
            appAppleId = id
        }
        environment = parser.option("--environment")
        if let environment { _ = try Self.environmentPolicy(environment) }
        receiptMode = parser.option("--receipt-mode")
        if let receiptMode, LegacyReceiptMode(rawValue: receiptMode) == nil {
            throw ValidationError("--receipt-mode must be local, verifyReceipt or serverAPI, got '\(receiptMode)'")
        }
        receiptTrustRoots = parser.options("--receipt-trust-root")
        configFiles = parser.options("--config")
        if let input, !FileManager.default.isReadableFile(atPath: input) {
            throw ValidationError("cannot read input file \(input)")
        }
    }

    static func environmentPolicy(_ raw: String) throws -> AppStoreEnvironmentPolicy {
        switch raw.lowercased() {
        case "production": return .production
        case "sandbox": return .sandbox
        case "any": return .any
        default: throw ValidationError("--environment must be production, sandbox or any, got '\(raw)'")
        }
    }

    func run() async throws -> Int32 {
        var configuration = try ConfigLoader.standard(files: configFiles).load()
        if !trustRoots.isEmpty { configuration.verify.trustRoots = trustRoots }
        if !bundleIds.isEmpty { configuration.verify.bundleIds = bundleIds }
        if let appAppleId { configuration.verify.appAppleId = appAppleId }
        if let environment { configuration.verify.environment = environment }
        if let receiptMode { configuration.verify.appReceiptMode = receiptMode }
        if !receiptTrustRoots.isEmpty { configuration.verify.receiptTrustRoots = receiptTrustRoots }
        let verifier: AppStoreSubmissionVerifier
        do {
            verifier = try configuration.submissionVerifier(transport: try CurlHTTPClient())
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("cannot set up verification: \(error)")
        }
        let checker = SubmissionChecker(ingest: IngestStage(configuration: IngestConfiguration(maxRecordBytes: configuration.ingest.maxRecordBytes)),
                                        verify: VerifyStage(verifier: verifier))

        guard let file = input.map({ fopen($0, "r") }) ?? fdopen(0, "r") else { throw ValidationError("cannot open \(input ?? "stdin")") }
        defer { if input != nil { fclose(file) } }
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length >= 0, let buffer else { break }
            var bytes = Array(UnsafeRawBufferPointer(start: buffer, count: length))
            while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            let result = await checker.check(bytes, now: Date())
            FileHandle.standardOutput.write(Data(result.jsonLine().utf8 + [0x0A]))
        }
        return 0
    }
}
