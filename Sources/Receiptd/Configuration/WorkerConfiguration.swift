import AppStore
import Kafka

/// Everything a receiptd process can be configured with, in one tree.
///
/// The defaults below are the embedded-broker defaults; `Config/receiptd.json` spells the whole tree
/// out, a deployment overlays a file of its own (`--config`), and `RECEIPTD_*` environment variables
/// override single keys (see ``ConfigLoader``). Secrets are never values here: only paths to files.
struct WorkerConfiguration: Codable, Sendable, Equatable {
    struct Kafka: Codable, Sendable, Equatable {
        /// Comma-separated `host:port` list.
        var bootstrapServers = "127.0.0.1:9092"
        /// Prefix of every client id (`<clientId>-<stage>`).
        var clientId = "receiptd"
        /// How often stored offsets are committed. A crash re-delivers at most this much work
        /// (ingest and verify re-emit it; fulfil's Kafka ledger suppresses what it had emitted).
        var commitIntervalSeconds = 5.0
        /// A worker that stops heartbeating (crashed, SIGKILL) loses its partitions after this long.
        var sessionTimeoutSeconds = 45.0
        /// `max.poll.interval.ms`: also the rebalance timeout, how long a rebalance waits for a
        /// member to finish its revocation (the workers drain revoked partitions within it, and
        /// fence what is still running past it), unless `rebalanceTimeoutSeconds` says less.
        var maxPollIntervalSeconds = 300.0
        /// How long the brokers wait a rebalance for a member's revocation when that is less than
        /// `max.poll.interval.ms`; 0 (the default) is `max.poll.interval.ms`, what Kafka brokers
        /// wait. The embedded broker sets it to the session timeout less a second, which is what
        /// librdkafka's mock waits.
        var rebalanceTimeoutSeconds = 0.0
        /// Static group membership: `group.instance.id` is this value with `-<stage>` appended, so a
        /// restarted worker gets its partitions back at once instead of after the old member's
        /// session. Only set it to something stable across restarts and unique per worker (a
        /// StatefulSet pod name: `RECEIPTD_KAFKA_GROUP_INSTANCE_ID=$(POD_NAME)`); empty (the
        /// default) is dynamic membership, right for Deployments, whose pod names change.
        var groupInstanceId = ""
        /// How long a starting worker waits for the brokers (its topic checks) before it gives up
        /// and exits 1; 0 waits forever. It says what it waits for every 15 s meanwhile.
        var startupTimeoutSeconds = 120.0
        /// How long a producer waits to fill a batch (`linger.ms`; librdkafka's default 5). Longer
        /// means fewer, larger requests (less CPU on clients and brokers) and that much more
        /// latency per stage hop. The embedded broker raises it (``EmbeddedBroker/lingerMilliseconds``).
        var lingerMilliseconds = 5.0
        /// How every receiptd producer compresses its batches (`compression.codec`: none, gzip,
        /// snappy, lz4, zstd). Consumers decompress whatever they fetch, so this is a producer's
        /// choice alone.
        var compression = "none"
        /// Raw librdkafka properties passed through unchanged (SASL, SSL, tuning). Properties
        /// receiptd sets itself (delivery semantics, commit interval) are refused here.
        var properties: [String: String] = [:]
        /// Raw librdkafka properties for the stage workers' consumers only, over `properties`
        /// (fetch tuning, which a producer would warn about). The embedded broker sets
        /// `fetch.wait.max.ms` here: librdkafka's mock cluster holds an empty fetch for that long
        /// even when records arrive meanwhile, where a real broker answers at once.
        var consumerProperties: [String: String] = [:]
        /// Raw librdkafka properties for the stage workers' producers only, over `properties`.
        /// The embedded broker sets `max.in.flight.requests.per.connection` 1 here (see
        /// ``EmbeddedBroker/producerProperties``).
        var producerProperties: [String: String] = [:]

        /// `heartbeat.interval.ms`: a tenth of the session, at most librdkafka's 3 s. A member learns
        /// of a rebalance at its next heartbeat, and a coordinator that counts only successful
        /// requests as activity (librdkafka's mock) sees it alive that much more often.
        var heartbeatInterval: Duration {
            min(.seconds(3), .seconds(sessionTimeoutSeconds) / 10)
        }

        /// What a producer gets: `properties` with `producerProperties` over them.
        var producerAdditionalProperties: [String: String] {
            properties.merging(producerProperties) { _, producer in producer }
        }

        /// ``compression`` as librdkafka's codec.
        /// - Throws: `StartupError` when it names no codec.
        func compressionCodec() throws -> KafkaProducerConfiguration.Compression {
            guard let codec = KafkaProducerConfiguration.Compression(rawValue: compression) else {
                let known = KafkaProducerConfiguration.Compression.allCases.map(\.rawValue).joined(separator: ", ")
                throw StartupError("kafka.compression must be one of \(known) (got \"\(compression)\")")
            }
            return codec
        }

        /// A producer as every receiptd producer is configured: client id `<clientId>-<role>`,
        /// ``lingerMilliseconds``, ``compression`` and ``producerAdditionalProperties``.
        /// - Throws: `StartupError` when ``compression`` names no codec.
        func producer(bootstrapServers: [String], role: String) throws -> KafkaProducerConfiguration {
            let codec = try compressionCodec()
            var producer = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
            producer.clientId = "\(clientId)-\(role)"
            producer.linger = .milliseconds(lingerMilliseconds)
            producer.compression = codec
            producer.additionalProperties = producerAdditionalProperties
            return producer
        }

        /// What a stage worker's consumer gets: `properties` with `consumerProperties` over them.
        var consumerAdditionalProperties: [String: String] {
            properties.merging(consumerProperties) { _, consumer in consumer }
        }
    }

    struct TopicSettings: Codable, Sendable, Equatable {
        var submitted = "receipts.submitted"
        var ingested = "receipts.ingested"
        var verified = "receipts.verified"
        var entitlements = "entitlements.changed"
        /// Fulfil → owners (`owner-purchase/v1`).
        var ownerUpdates = "entitlements.owner-updates"
        /// The per-owner view (`entitlement-state/v1`; compacted on real clusters).
        var entitlementState = "entitlements.state"
        var rejected = "receipts.rejected"
        var outcomes = "receipts.outcomes"
        var deadLetter = "receipts.dead-letter"
        /// Refund consumption requests for the backend, its answers, and how each ended.
        var consumptionRequests = "consumption.requests"
        var consumptionAnswers = "consumption.answers"
        var consumptionOutcomes = "consumption.outcomes"
        /// Partitions per topic when receiptd creates them (the embedded broker keeps only ~5 MiB
        /// per partition, so more partitions mean more retained backlog).
        var partitions = 32
        var replicationFactor = 1
        /// Create missing topics at start-up.
        var create = true
    }

    struct Groups: Codable, Sendable, Equatable {
        var ingest = "receiptd-ingest"
        var verify = "receiptd-verify"
        var fulfil = "receiptd-fulfil"
        var owners = "receiptd-owners"
        var consumption = "receiptd-consumption"
    }

    struct Runner: Codable, Sendable, Equatable {
        /// Records processed concurrently per worker (per-key order is kept).
        var maxInFlight = 256
        /// A record whose processing takes longer is treated as a transient failure.
        var recordTimeoutSeconds = 30.0
        /// How long SIGTERM waits for in-flight work before abandoning it (it is then re-delivered).
        var shutdownGraceSeconds = 20.0
    }

    struct Retry: Codable, Sendable, Equatable {
        /// One retry tier per entry: a transiently failed record waits this long (seconds) in
        /// tier `n` (`<input>.retry.<n>`) before its next attempt; after the last tier it is
        /// dead-lettered. Empty dead-letters at the first transient failure. Apple's
        /// `Retry-After` can only push an attempt later.
        var tierDelaysSeconds: [Double] = [10, 60, 600, 3600]
    }

    struct Ingest: Codable, Sendable, Equatable {
        /// Larger records are rejected with `record-too-large`.
        var maxRecordBytes = 262_144
    }

    struct Verify: Codable, Sendable, Equatable {
        /// PEM/DER files of trust anchors; empty means the bundled Apple Root CA - G3.
        var trustRoots: [String] = []
        /// Accepted bundle ids (exact match); empty accepts any.
        var bundleIds: [String] = []
        /// Checked on Production data when set.
        var appAppleId: Int64 = 0
        /// `production`, `sandbox` or `any`.
        var environment = "any"
        /// How `appReceipt` submissions are verified: `local` (PKCS#7 checked here, no network),
        /// `verifyReceipt` (Apple's legacy endpoint) or `serverAPI` (local check, then the
        /// App Store Server API history).
        var appReceiptMode = "local"
        /// PEM/DER trust anchors for StoreKit 1 receipts; empty means the bundled Apple Inc. Root.
        var receiptTrustRoots: [String] = []
        /// Whole JWS verification outcomes kept by the JWS's exact bytes (re-submitted
        /// `jwsRepresentation`s skip ECDSA); 0 turns the cache off.
        var verifiedCacheEntries = 10_000
        var serverApi = ServerAPI()
        var verifyReceipt = VerifyReceipt()
    }

    /// The App Store Server API (for `transactionId` submissions and the `serverAPI` receipt mode).
    /// Disabled while `keyPath` is empty.
    struct ServerAPI: Codable, Sendable, Equatable {
        /// Path of the `.p8` signing key (a secret: only its path is configuration).
        var keyPath = ""
        var keyId = ""
        var issuerId = ""
        /// The bundle id the tokens are issued for.
        var bundleId = ""
        /// Which environment is asked first (`production` or `sandbox`); the other is tried on 4040010.
        var environment = "production"
        var productionBaseURL = "https://api.storekit.apple.com"
        var sandboxBaseURL = "https://api.storekit-sandbox.apple.com"
        var requestTimeoutSeconds = 10.0
        /// The whole verify group's request budget per endpoint (`transactionInfo`, `transactionHistory`,
        /// `subscriptionStatuses`, …): `{"requests": N, "windowSeconds": S}`; each worker takes the share
        /// of its partitions. Empty: no limit but Apple's 429s.
        var budgets: [String: AppStoreBudget] = [:]
        /// A request waiting longer for budget goes to a retry tier instead (below `runner.recordTimeoutSeconds`).
        var budgetMaxWaitSeconds = 20.0
        /// Added to every budget window: covers the delay between admission here and arrival at Apple.
        var budgetMarginSeconds = 1.0

        /// The client configuration these settings describe (verify workers and reconcile share it).
        var clientConfiguration: AppStoreServerAPIConfiguration {
            var configuration = AppStoreServerAPIConfiguration(signingKeyPath: keyPath, keyId: keyId, issuerId: issuerId,
                                                               bundleId: bundleId)
            configuration.environment = environment.lowercased() == "sandbox" ? .sandbox : .production
            configuration.productionBaseURL = productionBaseURL
            configuration.sandboxBaseURL = sandboxBaseURL
            configuration.requestTimeout = .seconds(requestTimeoutSeconds)
            return configuration
        }
    }

    /// Apple's legacy verifyReceipt endpoint (the `verifyReceipt` receipt mode).
    struct VerifyReceipt: Codable, Sendable, Equatable {
        /// Path of the file holding the app's shared secret (needed for subscriptions); empty for none.
        var sharedSecretPath = ""
        var productionURL = "https://buy.itunes.apple.com/verifyReceipt"
        var sandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"
        var excludeOldTransactions = false
        var requestTimeoutSeconds = 10.0
    }

    struct Fulfil: Codable, Sendable, Equatable {
        /// The product catalogue (product id -> type and entitlement).
        var catalogue = "Config/catalogue.json"
        /// Where fulfil remembers what it emitted: `kafka` (the output partitions themselves,
        /// rebuilt on assignment: crash-proof, nothing local) or `memory` (this process only).
        var ledger = "kafka"
        /// A second user claiming someone's purchase: `keep` (rejected, the default) or `transfer`.
        var transferPolicy = "keep"
        /// `off`, or `userIdIsToken` (the app sets `appAccountToken` to the user id, a UUID).
        var appAccountTokenBinding = "off"
        /// What Sandbox purchases do: `grant` (the default: App Review buys in Sandbox), `tag` or `reject`.
        var sandboxPolicy = "grant"
        /// Whether a subscription in billing retry (no grace period) keeps access.
        var billingRetryAccess = false
        /// Publish each verified `CONSUMPTION_REQUEST` to `topics.consumptionRequests` (for a backend that
        /// answers them and a `receiptd consumption` worker); off: it ends `notification-informational`.
        var consumptionRequests = false
    }

    /// `/metrics`, `/healthz` and `/readyz` (docs/operations.md).
    struct ObservabilitySettings: Codable, Sendable, Equatable {
        /// The port served; 0 turns the endpoint off. 9464 is the port Prometheus exporters of
        /// this kind conventionally use; `receiptd dev` and the demo put their workers on the ports after it.
        var port = 9464
        /// The address bound: every interface, so the kubelet and Prometheus reach the pod.
        var host = "0.0.0.0"
        /// How often librdkafka's statistics (lag, queues, broker round-trip, rebalances) are
        /// refreshed; `/readyz` reads them too.
        var statisticsIntervalSeconds = 5.0
    }

    /// `receiptd notifications`: the App Store Server Notifications V2 receiver (docs/appstore-edge.md).
    struct Notifications: Codable, Sendable, Equatable {
        /// Bind address; TLS is terminated in front of it (ingress or proxy), so all interfaces by default.
        var host = "0.0.0.0"
        var port = 8080
        /// The URL path Apple POSTs to (the App Store Connect setting ends with it).
        var path = "/appstore/notifications"
        var healthPath = "/health"
        var metricsPath = "/metrics"
        /// Larger bodies get 413; must leave room for the submission's envelope within `ingest.maxRecordBytes`.
        var maxBodyBytes = 65_536
        /// How long a POST waits for Kafka's acknowledgement before answering 503 (Apple then retries).
        var publishTimeoutSeconds = 10.0
        /// libmicrohttpd threads (socket I/O only; handlers are tasks).
        var threads = 2
    }

    struct Log: Codable, Sendable, Equatable {
        /// `trace` ... `critical`.
        var level = "info"
        /// How often a worker logs its progress (records in and out, rejections, lag, rate) at
        /// info level, and repeats why it is not ready; 0 turns the line off.
        var progressIntervalSeconds = 30.0
    }

    var kafka = Kafka()
    var topics = TopicSettings()
    var groups = Groups()
    var runner = Runner()
    var retry = Retry()
    var ingest = Ingest()
    var verify = Verify()
    var fulfil = Fulfil()
    var observability = ObservabilitySettings()
    var notifications = Notifications()
    var log = Log()
}
