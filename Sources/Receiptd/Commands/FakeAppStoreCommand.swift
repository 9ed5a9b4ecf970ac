import AppStore
import FakeAppStore
import Foundation
import Lifecycle
import Observability

/// `receiptd fake-appstore`: the fake App Store (App Store Server API and legacy `verifyReceipt`,
/// Production and Sandbox on one port) for development, demos and chaos runs, with Apple's
/// failure modes on tap.
struct FakeAppStoreCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "fake-appstore",
        abstract: "Run a fake App Store (Server API + verifyReceipt) on loopback, with fault injection",
        usage: """
        receiptd fake-appstore [--port N] [--bundle-id ID] [--pki-dir DIR] [--seed N] [--samples N]
                               [--latency-ms N] [--jitter-ms N] [--rate-21005 P] [--rate-5xx P] [--rate-429 P]
                               [--rate-timeout P] [--rate-drop P] [--timeout-hold-ms N] [--retry-after-ms N]
                               [--metrics-port N]

          --port N             port on 127.0.0.1 (default 8089; 0 picks a free one)
          --bundle-id ID       the app served (default com.demo.game)
          --pki-dir DIR        write root.pem, AuthKey_<keyId>.p8, key-id, issuer-id, shared-secret there
          --seed N             seed of the fault schedule (default 1)
          --samples N          sample purchases to create and print (default 3)
          --latency-ms N       fixed delay before every answer (default 0)
          --jitter-ms N        extra uniform random delay up to N ms (default 0)
          --rate-21005 P       probability of verifyReceipt status 21005 (0...1, default 0)
          --rate-5xx P         probability of HTTP 500 (Server API, errorCode 5000001) / 503 (verifyReceipt)
          --rate-429 P         probability of HTTP 429 with Retry-After as UNIX milliseconds
          --rate-timeout P     probability of holding a request --timeout-hold-ms, then dropping it
          --rate-drop P        probability of closing the connection without a reply
          --timeout-hold-ms N  how long a "timed out" request is held (default 30000)
          --retry-after-ms N   how far in the future Retry-After points (default 1000)
          --metrics-port N     serve /metrics, /healthz and /readyz on 127.0.0.1:N (default 0: off)

        The rates must sum to at most 1. Prints the base URL on the first line of standard output,
        then the sandbox URLs, the credential files and the sample purchases (with receipt data for
        verifyReceipt), and runs until SIGINT/SIGTERM. Server API paths: /inApps/v1/transactions/{id},
        /inApps/v2/history/{id}, /inApps/v1/subscriptions/{id}; verifyReceipt: POST /verifyReceipt;
        Sandbox: the same under /sandbox. Requests need a bearer JWT signed with the written .p8.
        """)

    var port = 8089
    var bundleId = "com.demo.game"
    var pkiDirectory: String?
    var seed: UInt64 = 1
    var samples = 3
    var faults = FakeAppStoreFaults()
    var metricsPort = 0

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: [
            "--port", "--bundle-id", "--pki-dir", "--seed", "--samples", "--latency-ms", "--jitter-ms", "--rate-21005",
            "--rate-5xx", "--rate-429", "--rate-timeout", "--rate-drop", "--timeout-hold-ms", "--retry-after-ms",
            "--metrics-port",
        ])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        port = try parser.integer("--port", in: 0...65535) ?? port
        bundleId = parser.option("--bundle-id") ?? bundleId
        guard !bundleId.isEmpty else { throw ValidationError("--bundle-id must not be empty") }
        pkiDirectory = parser.option("--pki-dir")
        if let raw = parser.option("--seed") {
            guard let value = UInt64(raw) else { throw ValidationError("--seed must be a non-negative integer, got '\(raw)'") }
            seed = value
        }
        samples = try parser.integer("--samples", in: 0...10_000) ?? samples
        metricsPort = try parser.integer("--metrics-port", in: 0...65535) ?? 0
        let day = 86_400_000
        faults.latency = .milliseconds(try parser.integer("--latency-ms", in: 0...day) ?? 0)
        faults.jitter = .milliseconds(try parser.integer("--jitter-ms", in: 0...day) ?? 0)
        faults.timeoutHold = .milliseconds(try parser.integer("--timeout-hold-ms", in: 0...day) ?? 30_000)
        faults.retryAfterDelay = .milliseconds(try parser.integer("--retry-after-ms", in: 0...day) ?? 1000)
        faults.status21005Rate = try Self.rate(parser, "--rate-21005")
        faults.serverErrorRate = try Self.rate(parser, "--rate-5xx")
        faults.rateLimitRate = try Self.rate(parser, "--rate-429")
        faults.timeoutRate = try Self.rate(parser, "--rate-timeout")
        faults.dropRate = try Self.rate(parser, "--rate-drop")
        do { try faults.validate() } catch { throw ValidationError(error.message) }
    }

    private static func rate(_ parser: ArgumentParser, _ name: String) throws -> Double {
        guard let raw = parser.option(name) else { return 0 }
        guard let value = Double(raw), (0...1).contains(value) else {
            throw ValidationError("\(name) must be a probability in 0...1, got '\(raw)'")
        }
        return value
    }

    func run() async throws -> Int32 {
        let logger = Logger(label: "receiptd.fake-appstore", level: .info)
        let credentials = try FakeAppStoreCredentials.generate()
        var configuration = FakeAppStoreConfiguration(bundleId: bundleId, credentials: credentials)
        configuration.port = port
        configuration.seed = seed
        configuration.faults = faults
        let fake = try FakeAppStore(configuration: configuration)
        defer { fake.stop() }
        var settings = WorkerConfiguration.ObservabilitySettings()
        settings.port = metricsPort
        settings.host = "127.0.0.1"
        BuildInfo.register(in: .shared, role: "fake-appstore")
        FakeAppStoreMetrics.register(fake, in: .shared)
        let operations = try OperationsServer.start(settings, registry: .shared, readiness: { .ready("serving") })
        defer { operations?.stop() }

        print(fake.productionBaseURL)
        print("sandbox: \(fake.sandboxBaseURL)")
        print("verifyReceipt: \(fake.productionVerifyReceiptURL) (sandbox: \(fake.sandboxVerifyReceiptURL))")
        print("bundle id: \(bundleId), key id: \(credentials.keyId), issuer id: \(credentials.issuerId)")
        if let pkiDirectory {
            let files = try credentials.write(to: pkiDirectory)
            print("root certificate: \(files.rootCertificate)")
            print("signing key: \(files.signingKey)")
            if let secret = files.sharedSecret { print("shared secret: \(secret)") }
        } else {
            print("credentials: not written (pass --pki-dir DIR to write the root, the .p8 key and the ids)")
        }
        if let operations { print("metrics: http://127.0.0.1:\(operations.port)/metrics") }
        for line in makeSamples(fake) { print(line) }
        fflush(nil)
        logger.notice("fake App Store up", metadata: ["url": "\(fake.productionBaseURL)", "seed": "\(seed)"])

        // Started by a test or a tool that may die without stopping it (RECEIPTD_PARENT_PID).
        let shutdown = GracefulShutdownTrigger()
        let parentWatch = ParentWatch.startIfRequested(logger: logger, shutDown: { shutdown.trigger() })
        defer { parentWatch?.cancel() }
        var signals = ServiceGroup.Configuration()
        signals.maximumGracefulShutdownDuration = .seconds(2)
        try await ServiceGroup(services: [UntilShutdown()], configuration: signals, logger: logger, trigger: shutdown).run()
        logger.notice("fake App Store stopped", metadata: ["requests": .integer(fake.statistics.requests)])
        return 0
    }

    /// Creates sample purchases (alternating Sandbox and Production, cycling product types) and
    /// describes each with a receipt for its customer.
    private func makeSamples(_ fake: FakeAppStore) -> [String] {
        let now = Date()
        let kinds: [(String, ProductType)] = [("com.demo.monthly.sub", .autoRenewable), ("com.demo.coins.100", .consumable),
                                              ("com.demo.unlock.pro", .nonConsumable)]
        var lines: [String] = []
        for index in 0..<samples {
            let (product, type) = kinds[index % kinds.count]
            let environment: AppStoreEnvironment = index.isMultiple(of: 2) ? .sandbox : .production
            let purchase = fake.store.purchase(
                productId: product, type: type, environment: environment, purchaseDate: now.addingTimeInterval(-3600),
                expiresDate: type == .autoRenewable ? now.addingTimeInterval(30 * 86_400) : nil)
            let receipt = fake.store.makeReceipt(customerId: purchase.customerId, environment: environment)
            lines.append("sample: transactionId=\(purchase.transactionId) environment=\(environment.rawValue) "
                         + "productId=\(product) receipt-data=\(receipt)")
        }
        return lines
    }
}
