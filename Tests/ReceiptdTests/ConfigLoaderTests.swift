import Foundation
import Observability
import Pipeline
import Testing
@testable import Receiptd

@Suite final class ConfigLoaderTests: Sendable {
    /// This test's files, in a directory of its own that goes with it.
    private let scratch: URL

    init() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-config-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    private func file(_ json: String) throws -> String {
        let path = scratch.appendingPathComponent("receiptd-config-\(UUID().uuidString).json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func defaultsMatchTheShippedConfigFile() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Config/receiptd.json").path
        var loaded = try ConfigLoader(files: [shipped]).load()
        // The file names its catalogue relative to itself.
        #expect(loaded.fulfil.catalogue == URL(fileURLWithPath: shipped).deletingLastPathComponent()
            .appendingPathComponent("catalogue.json").path)
        loaded.fulfil.catalogue = WorkerConfiguration().fulfil.catalogue
        #expect(loaded == WorkerConfiguration())
    }

    @Test func relativePathsInAFileAreRelativeToThatFile() throws {
        let overlay = try file(#"{"fulfil": {"catalogue": "catalogue.json"}, "verify": {"trustRoots": ["../roots/a.pem", "/abs/b.pem"], "serverApi": {"keyPath": "keys/k.p8"}}}"#)
        let directory = URL(fileURLWithPath: overlay).deletingLastPathComponent()
        let c = try ConfigLoader(files: [overlay], environment: ["RECEIPTD_VERIFY_VERIFY_RECEIPT_SHARED_SECRET_PATH": "secret"]).load()
        #expect(c.fulfil.catalogue == directory.appendingPathComponent("catalogue.json").path)
        #expect(c.verify.trustRoots == [directory.deletingLastPathComponent().appendingPathComponent("roots/a.pem").path, "/abs/b.pem"])
        #expect(c.verify.serverApi.keyPath == directory.appendingPathComponent("keys/k.p8").path)
        #expect(c.verify.verifyReceipt.sharedSecretPath == "secret", "variables stay relative to the working directory")
    }

    /// The overlay `receiptd broker --help` recommends for its workers shortens only the session
    /// and the consumers' fetch wait, keeps one produce request in flight and lengthens the
    /// producers' linger: what the harnesses give their workers.
    @Test func theEmbeddedBrokerOverlayShortensTheSessionAndTheFetchWait() throws {
        let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Config")
        let base = try ConfigLoader(files: [config.appendingPathComponent("receiptd.json").path], environment: [:]).load()
        var overlaid = try ConfigLoader(files: [config.appendingPathComponent("receiptd.json").path,
                                                config.appendingPathComponent("embedded-broker.json").path],
                                        environment: [:]).load()
        #expect(overlaid.kafka.sessionTimeoutSeconds == 10 && base.kafka.sessionTimeoutSeconds == 45)
        #expect(overlaid.kafka.consumerProperties == EmbeddedBroker.consumerProperties && base.kafka.consumerProperties.isEmpty)
        #expect(overlaid.kafka.producerProperties == EmbeddedBroker.producerProperties && base.kafka.producerProperties.isEmpty)
        #expect(overlaid.kafka.maxPollIntervalSeconds == 10 && base.kafka.maxPollIntervalSeconds == 300)
        #expect(overlaid.kafka.lingerMilliseconds == EmbeddedBroker.lingerMilliseconds && base.kafka.lingerMilliseconds == 5)
        overlaid.kafka.lingerMilliseconds = base.kafka.lingerMilliseconds
        overlaid.kafka.sessionTimeoutSeconds = base.kafka.sessionTimeoutSeconds
        overlaid.kafka.maxPollIntervalSeconds = base.kafka.maxPollIntervalSeconds
        overlaid.kafka.consumerProperties = base.kafka.consumerProperties
        overlaid.kafka.producerProperties = base.kafka.producerProperties
        #expect(overlaid == base)
    }

    /// A tenth of the session, at most librdkafka's 3 s: chaos's 6 s session heartbeats every
    /// 600 ms, the 45 s default every 3 s.
    @Test func workersHeartbeatATenthOfTheirSessionAtMostThreeSeconds() {
        var kafka = WorkerConfiguration.Kafka()
        #expect(kafka.heartbeatInterval == .seconds(3))
        kafka.sessionTimeoutSeconds = 6
        #expect(kafka.heartbeatInterval == .milliseconds(600))
        kafka.sessionTimeoutSeconds = 10
        #expect(kafka.heartbeatInterval == .seconds(1))
    }

    /// The harnesses' workers get the embedded broker's settings, and a configuration's own
    /// values win: its own librdkafka properties, and a linger it set.
    @Test func theEmbeddedBrokersWorkerSettingsKeepWhatTheConfigurationSet() throws {
        let defaults = EmbeddedBroker.workerSettings(WorkerConfiguration())
        #expect(defaults.kafka.lingerMilliseconds == EmbeddedBroker.lingerMilliseconds)
        #expect(defaults.kafka.consumerProperties == EmbeddedBroker.consumerProperties)
        #expect(defaults.kafka.producerProperties == EmbeddedBroker.producerProperties)
        #expect(defaults.kafka.rebalanceTimeoutSeconds == defaults.kafka.sessionTimeoutSeconds - 1)
        #expect(defaults.kafka.maxPollIntervalSeconds == WorkerConfiguration.Kafka().maxPollIntervalSeconds)
        #expect(!defaults.topics.create)
        let producer = try defaults.kafka.producer(bootstrapServers: ["127.0.0.1:1"], role: "verify")
        #expect(producer.linger == .milliseconds(EmbeddedBroker.lingerMilliseconds))
        #expect(producer.clientId == "receiptd-verify")
        #expect(producer.additionalProperties == EmbeddedBroker.producerProperties)

        var own = WorkerConfiguration()
        own.kafka.lingerMilliseconds = 12
        own.kafka.consumerProperties = ["fetch.wait.max.ms": "50"]
        let overlaid = EmbeddedBroker.workerSettings(own)
        #expect(overlaid.kafka.lingerMilliseconds == 12)
        #expect(overlaid.kafka.consumerProperties["fetch.wait.max.ms"] == "50")
    }

    /// A JSON-object variable adds its keys to the files' map, as a file does, so the workers of a
    /// harness (which re-read the variables over the file the harness wrote) keep the embedded
    /// broker's fetch wait when someone tunes another consumer property.
    @Test func mapVariablesMergeKeyByKeyOverTheFiles() throws {
        let overlay = try file(#"{"kafka": {"consumerProperties": {"fetch.wait.max.ms": "25", "fetch.min.bytes": "1"}}}"#)
        let loaded = try ConfigLoader(files: [overlay], environment: [
            "RECEIPTD_KAFKA_CONSUMER_PROPERTIES": #"{"queued.max.messages.kbytes": "8192", "fetch.min.bytes": "64"}"#,
        ]).load()
        #expect(loaded.kafka.consumerProperties == ["fetch.wait.max.ms": "25", "queued.max.messages.kbytes": "8192",
                                                    "fetch.min.bytes": "64"])
        let alone = try ConfigLoader(environment: ["RECEIPTD_KAFKA_PROPERTIES": #"{"socket.keepalive.enable": "true"}"#]).load()
        #expect(alone.kafka.properties == ["socket.keepalive.enable": "true"])
    }

    /// `kafka.compression` reaches every producer the configuration builds, and a codec librdkafka
    /// does not have is refused by name when the configuration loads (before any command waits for
    /// its brokers) and by the producer's configuration itself.
    @Test func producersGetTheConfiguredCompression() throws {
        let defaults = try ConfigLoader(environment: [:]).load()
        #expect(try defaults.kafka.producer(bootstrapServers: ["b:9092"], role: "ingest").compression == .none)
        let lz4 = try ConfigLoader(environment: ["RECEIPTD_KAFKA_COMPRESSION": "lz4"]).load()
        #expect(try lz4.kafka.producer(bootstrapServers: ["b:9092"], role: "ingest").compression == .lz4)
        let zstd = try ConfigLoader(files: [try file(#"{"kafka": {"compression": "zstd"}}"#)]).load()
        #expect(try zstd.kafka.producer(bootstrapServers: ["b:9092"], role: "replay").compression == .zstd)
        let refusal = #"kafka.compression must be one of none, gzip, snappy, lz4, zstd (got "brotli")"#
        let loading = #expect(throws: ConfigLoader.LoadError.self) {
            try ConfigLoader(environment: ["RECEIPTD_KAFKA_COMPRESSION": "brotli"]).load()
        }
        #expect(loading?.description == refusal)
        var unknown = defaults
        unknown.kafka.compression = "brotli"
        let error = #expect(throws: StartupError.self) { try unknown.kafka.producer(bootstrapServers: ["b:9092"], role: "ingest") }
        #expect(error?.description == refusal)
    }

    @Test func invalidJSONNamesTheLineAndColumn() throws {
        let broken = try file("{\n  \"kafka\": {\n    \"clientId\": \"x\",,\n  }\n}\n")
        let error = try #require(throws: ConfigLoader.LoadError.self) { try ConfigLoader(files: [broken]).load() }
        #expect(error.description.contains("line 3, column 21"), "\(error)")
    }

    @Test func filesOverlayInOrderThenEnvironmentThenOverrides() throws {
        let base = try file(#"{"kafka": {"bootstrapServers": "a:9092", "properties": {"security.protocol": "SSL"}}, "topics": {"partitions": 12}}"#)
        let overlay = try file(#"{"kafka": {"bootstrapServers": "b:9092"}, "verify": {"bundleIds": ["com.x"]}}"#)
        var loader = ConfigLoader(files: [base, overlay], environment: [
            "RECEIPTD_TOPICS_PARTITIONS": "48", "RECEIPTD_RUNNER_MAX_IN_FLIGHT": "64",
            "RECEIPTD_VERIFY_ENVIRONMENT": "production", "RECEIPTD_TOPICS_CREATE": "false",
            "RECEIPTD_RUNNER_RECORD_TIMEOUT_SECONDS": "2.5", "PATH": "/bin",
        ])
        loader.overrides["groups"] = ["verify": "v2"]
        let c = try loader.load()
        #expect(c.kafka.bootstrapServers == "b:9092")
        #expect(c.kafka.properties == ["security.protocol": "SSL"])
        #expect(c.topics.partitions == 48)
        #expect(c.topics.create == false)
        #expect(c.runner.maxInFlight == 64)
        #expect(c.runner.recordTimeoutSeconds == 2.5)
        #expect(c.verify.bundleIds == ["com.x"])
        #expect(c.verify.environment == "production")
        #expect(c.groups.verify == "v2")
        #expect(c.groups.ingest == "receiptd-ingest")
        #expect(c.groupId(for: .owners) == "receiptd-owners")
    }

    @Test func ownerViewTopicsAndGroupComeFromTheConfiguration() throws {
        let defaults = WorkerConfiguration()
        #expect(defaults.pipelineTopics == Topics())
        #expect(defaults.pipelineTopics.input(of: .owners) == "entitlements.owner-updates")
        var loader = ConfigLoader(files: [try file(#"{"topics": {"ownerUpdates": "x.owner-updates"}, "groups": {"owners": "o"}}"#)],
                                  environment: ["RECEIPTD_TOPICS_ENTITLEMENT_STATE": "x.state"])
        loader.overrides["groups"] = ["fulfil": "f"]
        let c = try loader.load()
        #expect(c.pipelineTopics.ownerUpdates == "x.owner-updates" && c.pipelineTopics.entitlementState == "x.state")
        #expect(c.groupId(for: .owners) == "o" && c.groupId(for: .fulfil) == "f")
        #expect(c.allTopicNames.contains("x.owner-updates.retry.1"))
    }

    @Test func fulfilPoliciesLoadFromFilesAndVariables() throws {
        #expect(try WorkerConfiguration().fulfilmentPolicy() == FulfilmentPolicy())
        let overlay = try file(#"{"fulfil": {"transferPolicy": "transfer", "appAccountTokenBinding": "userIdIsToken"}}"#)
        let c = try ConfigLoader(files: [overlay], environment: [
            "RECEIPTD_FULFIL_SANDBOX_POLICY": "tag", "RECEIPTD_FULFIL_BILLING_RETRY_ACCESS": "true",
        ]).load()
        #expect(try c.fulfilmentPolicy() == FulfilmentPolicy(transfer: .transfer, appAccountToken: .userIdIsToken,
                                                            sandbox: .tag, billingRetryAccess: true))
        #expect(throws: ConfigLoader.LoadError.self) {
            try ConfigLoader(files: [try file(#"{"fulfil": {"billingRetryAccess": "yes"}}"#)]).load()
        }
    }

    @Test(arguments: [("transferPolicy", "move"), ("appAccountTokenBinding", "uuid"), ("sandboxPolicy", "deny")])
    func anInvalidFulfilPolicyIsRefusedNamingItsKey(key: String, value: String) throws {
        let c = try ConfigLoader(files: [try file(#"{"fulfil": {"\#(key)": "\#(value)"}}"#)]).load()
        let error = #expect(throws: PipelineConfigurationError.self) { try c.fulfilmentPolicy() }
        #expect(error?.message.hasPrefix("fulfil.\(key): \"\(value)\" is not one of ") == true, "\(String(describing: error))")
    }

    @Test func unknownKeysAndVariablesAreErrorsNotSilentDefaults() throws {
        let typo = try file(#"{"kafka": {"bootstrapServer": "x:1"}}"#)
        #expect(throws: ConfigLoader.LoadError.self) { try ConfigLoader(files: [typo]).load() }
        #expect(throws: ConfigLoader.LoadError.self) {
            try ConfigLoader(environment: ["RECEIPTD_KAFKA_BOOTSTRAP": "x:1"]).load()
        }
        #expect(throws: ConfigLoader.LoadError.self) {
            try ConfigLoader(environment: ["RECEIPTD_TOPICS_PARTITIONS": "many"]).load()
        }
        let wrongType = try file(#"{"topics": {"partitions": "32"}}"#)
        #expect(throws: ConfigLoader.LoadError.self) { try ConfigLoader(files: [wrongType]).load() }
        #expect(throws: ConfigLoader.LoadError.self) { try ConfigLoader(files: ["/nonexistent/receiptd.json"]).load() }
    }

    @Test func retryTiersComeFromFilesAndVariablesAndAreValidated() throws {
        #expect(WorkerConfiguration().retry.tierDelaysSeconds == [10, 60, 600, 3600])
        #expect(WorkerConfiguration().allTopicNames.contains("receipts.verified.retry.4"))
        let fromVariable = try ConfigLoader(environment: ["RECEIPTD_RETRY_TIER_DELAYS_SECONDS": "0.2, 0.4"]).load()
        #expect(fromVariable.retry.tierDelaysSeconds == [0.2, 0.4])
        #expect(fromVariable.retryPolicy.delays == [.milliseconds(200), .milliseconds(400)])
        #expect(fromVariable.allTopicNames.filter { $0.contains(".retry.") }.count == 2 * StageName.allCases.count)
        #expect(throws: ConfigLoader.LoadError.self) {
            try ConfigLoader(environment: ["RECEIPTD_RETRY_TIER_DELAYS_SECONDS": "10,soon"]).load()
        }
        let none = try ConfigLoader(files: [try file(#"{"retry": {"tierDelaysSeconds": []}}"#)]).load()
        #expect(none.allTopicNames.count == 12)
        #expect(throws: PipelineConfigurationError.self) {
            try ConfigLoader(files: [try file(#"{"retry": {"tierDelaysSeconds": [10, 0]}}"#)]).load().retryPolicy.validate()
        }
    }

    @Test func environmentNamesAreUpperSnakeOfTheKeyPath() {
        #expect(ConfigLoader.upperSnake("bootstrapServers") == "BOOTSTRAP_SERVERS")
        #expect(ConfigLoader.upperSnake("maxInFlight") == "MAX_IN_FLIGHT")
        #expect(ConfigLoader.upperSnake("kafka") == "KAFKA")
        #expect(ConfigLoader.upperSnake("productionBaseURL") == "PRODUCTION_BASE_URL")
        #expect(ConfigLoader.upperSnake("productionURL") == "PRODUCTION_URL")
        #expect(ConfigLoader.upperSnake("appAppleId") == "APP_APPLE_ID")
        #expect(ConfigLoader.upperSnake("URLPath") == "URL_PATH")
    }
}

@Suite struct ArgumentParserTests {
    @Test func parsesOptionsFlagsAndPositionals() throws {
        let p = try ArgumentParser(["file.jsonl", "--bundle-id", "a", "--bundle-id=b", "--keep", "--", "--x"],
                                   options: ["--bundle-id"], flags: ["--keep"])
        #expect(p.options("--bundle-id") == ["a", "b"])
        #expect(p.flag("--keep"))
        #expect(p.positionals == ["file.jsonl", "--x"])
    }

    @Test func rejectsUnknownOptionsAndMissingValues() {
        #expect(throws: ValidationError.self) { try ArgumentParser(["--nope"], options: []) }
        #expect(throws: ValidationError.self) { try ArgumentParser(["--brokers"], options: ["--brokers"]) }
        #expect(throws: ValidationError.self) { try ArgumentParser(["--keep=1"], options: [], flags: ["--keep"]) }
        #expect(throws: ValidationError.self) {
            try ArgumentParser(["--port", "70000"], options: ["--port"]).integer("--port", in: 0...65535)
        }
    }

    @Test func commandsValidateTheirArguments() {
        #expect(throws: ValidationError.self) { try CheckCommand(arguments: ["--environment", "staging"]) }
        #expect(throws: ValidationError.self) { try CheckCommand(arguments: ["--app-apple-id", "-3"]) }
        #expect(throws: ValidationError.self) { try CheckCommand(arguments: ["a", "b"]) }
        #expect(throws: ValidationError.self) { try BenchCommand(arguments: ["nothing"]) }
        #expect(throws: ValidationError.self) { try DemoCommand(arguments: ["--submissions", "0"]) }
        #expect(throws: ValidationError.self) { try IngestCommand(arguments: ["--max-in-flight", "0"]) }
    }

    @Test func benchAppStoreDefaultsKeepEnoughInFlightForTheLatency() throws {
        let defaults = try BenchCommand(arguments: ["appstore"])
        #expect(defaults.count == 40_000)
        #expect(defaults.maxInFlight == 4096)
        #expect(defaults.latency == .milliseconds(250))
        #expect(defaults.rounds == 1)
        let chosen = try BenchCommand(arguments: ["appstore", "--submissions", "500", "--max-in-flight", "64", "--latency-ms", "10"])
        #expect(chosen.count == 500)
        #expect(chosen.maxInFlight == 64)
        #expect(chosen.latency == .milliseconds(10))
        #expect(try BenchCommand(arguments: ["verify"]).count == 20_000)
    }

    @Test func replayParsesItsFiltersAndRejectsInconsistentOnes() throws {
        let replay = try ReplayCommand(arguments: [
            "--reason", "timeout", "--reason=app-store-unavailable", "--bundle-id", "com.x", "--since", "2026-11-30T00:00:00Z",
            "--until", "2026-12-01T00:00:00+01:00", "--partition", "3", "--from-offset", "10", "--to-offset", "20",
            "--dry-run", "--rate", "50", "--from", "dlq",
        ])
        #expect(replay.filter.reasons == ["timeout", "app-store-unavailable"])
        #expect(replay.filter.bundleId == "com.x")
        #expect(replay.filter.since == RFC3339.date(from: "2026-11-30T00:00:00Z"))
        #expect(replay.filter.until == RFC3339.date(from: "2026-11-30T23:00:00Z"))
        #expect(replay.filter.partition == 3 && replay.filter.fromOffset == 10 && replay.filter.toOffset == 20)
        #expect(replay.dryRun && replay.rate == 50 && replay.topic == "dlq")
        #expect(try !ReplayCommand(arguments: []).dryRun)
        for bad in [["--since", "yesterday"], ["--rate", "0"], ["--from-offset", "5", "--to-offset", "4"],
                    ["--since", "2026-12-01T00:00:00Z", "--until", "2026-11-30T00:00:00Z"], ["--partition", "-1"],
                    ["--dry-run=yes"], ["extra"]] {
            #expect(throws: ValidationError.self, "\(bad)") { try ReplayCommand(arguments: bad) }
        }
    }
}

/// The configuration a harness writes for its workers (`receiptd dev`, demo, bench, chaos).
@Suite struct WorkerFleetConfigurationTests {
    /// A default relative path (`fulfil.catalogue`) means the harness's current directory; the
    /// worker reads the file from a temporary directory, so it must come out absolute (`receiptd
    /// dev` without overlays once sent fulfil looking for the catalogue in the temporary directory).
    @Test func relativePathsAreWrittenAbsolute() throws {
        let fleet = try WorkerFleet(prefix: "receiptd-fleet-test", configName: "workers.json")
        defer { fleet.remove() }
        var configuration = WorkerConfiguration()
        configuration.verify.trustRoots = ["/etc/roots/apple.pem", "certs/extra.pem"]
        try fleet.writeConfiguration(configuration)
        let loaded = try ConfigLoader(files: [fleet.configPath], environment: [:]).load()
        let cwd = FileManager.default.currentDirectoryPath
        #expect(loaded.fulfil.catalogue == cwd + "/Config/catalogue.json")
        #expect(loaded.verify.trustRoots == ["/etc/roots/apple.pem", cwd + "/certs/extra.pem"])
        var expected = configuration
        expected.fulfil.catalogue = loaded.fulfil.catalogue
        expected.verify.trustRoots = loaded.verify.trustRoots
        #expect(loaded == expected)
    }
}
