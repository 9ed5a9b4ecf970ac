import Foundation
import HTTP
import Kafka
import Lifecycle
import Observability
import Pipeline

/// `receiptd notifications`: the bridge Apple cannot skip, from App Store Server Notifications V2
/// (HTTPS POSTs) to `receipts.submitted`, answering 200 only once Kafka holds the notification.
struct NotificationsCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Receive App Store Server Notifications V2 over HTTP and publish them to receipts.submitted",
        usage: """
        receiptd notifications [--config FILE]... [--brokers LIST] [--port N]

          --config FILE   configuration file (repeatable; later files override earlier ones)
          --brokers LIST  Kafka bootstrap servers (overrides kafka.bootstrapServers)
          --port N        port (overrides notifications.port; 0 picks a free one)

        POST notifications.path (default /appstore/notifications) with Apple's {"signedPayload": "..."}:
        the shape is checked (verify proves it later), a serverNotification submission without a user id
        is published to topics.submitted (key bundleId/<payload SHA-256>), and the answer is 200 once
        Kafka acknowledged it, 503 when it did not within notifications.publishTimeoutSeconds (Apple
        retries), 400 {"error": reason, "detail": ...} for a malformed body, 413 above
        notifications.maxBodyBytes. GET notifications.healthPath and notifications.metricsPath serve
        health and Prometheus metrics. Plain HTTP: terminate TLS in front (docs/appstore-edge.md).
        Prints `ready url=http://HOST:PORT/PATH` on standard output once listening; runs until SIGINT/SIGTERM.
        """)

    var configFiles: [String] = []
    var brokers: String?
    var port: Int?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--config", "--brokers", "--port"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
        port = try parser.integer("--port", in: 0...65535)
    }

    func run() async throws -> Int32 {
        var loader = ConfigLoader.standard(files: configFiles, brokers: brokers)
        if let port { loader.overrides["notifications"] = ["port": port] }
        let configuration = try loader.load()
        try configuration.validateNotifications()
        let settings = configuration.notifications
        let logger = makeLogger(configuration, label: "receiptd.notifications")
        let brokers = configuration.bootstrapServerList
        if configuration.topics.create {
            await TopicProvisioner(bootstrapServers: brokers, properties: configuration.kafka.properties, logger: logger)
                .ensure([configuration.topics.submitted], partitions: configuration.topics.partitions,
                        replicationFactor: configuration.topics.replicationFactor, configs: [:])
        }
        var producer = try configuration.kafka.producer(bootstrapServers: brokers, role: "notifications")
        producer.messageTimeout = .seconds(settings.publishTimeoutSeconds)
        let sink = try KafkaRecordSink(configuration: producer)
        let endpoint = NotificationEndpoint(
            notificationPath: settings.path, healthPath: settings.healthPath, metricsPath: settings.metricsPath,
            intake: NotificationIntake(bundleIds: Set(configuration.verify.bundleIds)), sink: sink,
            topic: configuration.topics.submitted, logger: logger, metrics: .shared)
        let server = try HTTPServer(
            configuration: .init(host: settings.host, port: settings.port, threadPoolSize: settings.threads,
                                 maxRequestBodySize: settings.maxBodyBytes),
            handler: { await endpoint.handle($0) })
        let shown = settings.host == "0.0.0.0" ? "127.0.0.1" : settings.host
        print("ready url=http://\(shown):\(server.port)\(settings.path)")
        fflush(nil)
        logger.notice("notification receiver started", metadata: [
            "http.port": .int(Int64(server.port)), "http.path": .string(settings.path),
            LoggingKeys.kafkaTopic: .string(configuration.topics.submitted),
        ])
        let shutdown = GracefulShutdownTrigger()
        let parentWatch = ParentWatch.startIfRequested(logger: logger, shutDown: { shutdown.trigger() })
        defer { parentWatch?.cancel() }
        var lifecycle = ServiceGroup.Configuration()
        lifecycle.maximumGracefulShutdownDuration = .seconds(settings.publishTimeoutSeconds + 5)
        try await ServiceGroup(services: [UntilShutdown()], configuration: lifecycle, logger: logger, trigger: shutdown).run()
        // Stop taking requests first (in-flight ones are closed unanswered, so Apple retries them),
        // then flush what the producer holds.
        server.stop()
        await sink.close()
        logger.notice("notification receiver stopped", metadata: ["http.requests": .int(Int64(server.statistics.requestsHandled))])
        return 0
    }
}

extension WorkerConfiguration {
    /// Checks `notifications.*` before anything listens.
    /// - Throws: `ValidationError` naming the key.
    func validateNotifications() throws {
        let n = notifications
        for (key, path) in [("path", n.path), ("healthPath", n.healthPath), ("metricsPath", n.metricsPath)]
        where !path.hasPrefix("/") {
            throw ValidationError("notifications.\(key) must start with /, got '\(path)'")
        }
        guard Set([n.path, n.healthPath, n.metricsPath]).count == 3 else {
            throw ValidationError("notifications.path, healthPath and metricsPath must be distinct")
        }
        let room = ingest.maxRecordBytes - 1024
        guard (1024...max(1024, room)).contains(n.maxBodyBytes) else {
            throw ValidationError("notifications.maxBodyBytes must be in 1024...\(room) (ingest.maxRecordBytes less 1 KiB "
                                  + "for the submission around the payload), got \(n.maxBodyBytes)")
        }
        guard n.publishTimeoutSeconds >= 1, n.publishTimeoutSeconds <= 300 else {
            throw ValidationError("notifications.publishTimeoutSeconds must be in 1...300, got \(n.publishTimeoutSeconds)")
        }
        guard (0...65535).contains(n.port) else { throw ValidationError("notifications.port must be in 0...65535, got \(n.port)") }
        guard (1...64).contains(n.threads) else { throw ValidationError("notifications.threads must be in 1...64, got \(n.threads)") }
    }
}
