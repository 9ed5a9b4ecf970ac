import CRdKafka
import Synchronization

/// An in-process Kafka cluster (librdkafka's mock brokers) for development, demos and tests.
///
/// It speaks the Kafka protocol on loopback ports, supports producing, fetching, consumer
/// groups and offset commits, and lets tests inject faults (brokers down, slow brokers,
/// request errors). Topics are created with ``createTopic(name:partitions:replicationFactor:)``;
/// librdkafka 2.0.2's mock does not implement the CreateTopics API, so
/// ``KafkaAdminClient/createTopics(_:timeout:)`` routes requests for an in-process mock here.
///
/// - Important: Brokers listen on ephemeral ports. For a fixed address that other processes can
///   use, call ``listen(bootstrapPort:host:)``.
public final class KafkaMockCluster: Sendable {
    /// Request API keys, for ``pushRequestErrors(apiKey:errors:)``.
    public enum ApiKey {
        /// Produce.
        public static let produce: Int16 = 0
        /// Fetch.
        public static let fetch: Int16 = 1
        /// ListOffsets (watermarks, offset reset).
        public static let listOffsets: Int16 = 2
        /// Metadata.
        public static let metadata: Int16 = 3
        /// OffsetCommit.
        public static let offsetCommit: Int16 = 8
        /// OffsetFetch.
        public static let offsetFetch: Int16 = 9
        /// FindCoordinator.
        public static let findCoordinator: Int16 = 10
        /// JoinGroup.
        public static let joinGroup: Int16 = 11
        /// Heartbeat.
        public static let heartbeat: Int16 = 12
        /// SyncGroup.
        public static let syncGroup: Int16 = 14
        /// InitProducerId (idempotent producers).
        public static let initProducerId: Int16 = 22
    }

    private struct Handles: @unchecked Sendable {
        // @unchecked: the pointers are only used under `handles`' lock; mock calls are thread-safe.
        let client: OpaquePointer
        let cluster: OpaquePointer
        var forwarder: LoopbackForwarder?
    }

    private let handles: Mutex<Handles?>

    /// The brokers' addresses (`127.0.0.1:port,...`), for ``KafkaProducerConfiguration/bootstrapServers``.
    public let bootstrapServers: String
    /// The number of brokers (ids `1...brokerCount`).
    public let brokerCount: Int

    /// Starts a cluster.
    /// - Parameter brokerCount: The number of brokers (ids `1...brokerCount`).
    /// - Throws: ``KafkaError`` when librdkafka cannot start the cluster.
    public init(brokerCount: Int = 1) throws {
        guard brokerCount >= 1 else {
            throw KafkaError.invalidArgument("KafkaMockCluster brokerCount must be at least 1, got \(brokerCount)")
        }
        // An rd_kafka_t only hosts the mock; it never connects anywhere (hence no bootstrap and
        // a log level that hides the "no bootstrap.servers" notice).
        let conf = try RDKafkaConfig.make(["log_level": "4"])
        rd_kafka_conf_set_log_cb(conf, rdKafkaMockLogCallback)
        var errorText = [CChar](repeating: 0, count: 512)
        guard let client = rd_kafka_new(RD_KAFKA_PRODUCER, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError.invalidConfiguration("rd_kafka_new for the mock cluster failed")
        }
        guard let cluster = rd_kafka_mock_cluster_new(client, Int32(brokerCount)) else {
            rd_kafka_destroy(client)
            throw KafkaError.invalidConfiguration("rd_kafka_mock_cluster_new failed")
        }
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        self.brokerCount = brokerCount
        self.handles = Mutex(Handles(client: client, cluster: cluster, forwarder: nil))
        Self.register(self, addresses: bootstrapServers.split(separator: ",").map(String.init))
    }

    deinit {
        close()
    }

    /// Creates a topic.
    /// - Parameters:
    ///   - name: The topic name.
    ///   - partitions: The number of partitions.
    ///   - replicationFactor: Replicas per partition (at most ``brokerCount``).
    /// - Throws: ``KafkaError`` for invalid arguments or a closed cluster. An existing topic is
    ///   left as it is.
    public func createTopic(name: String, partitions: Int = 1, replicationFactor: Int = 1) throws {
        try KafkaTopicSpecification(name: name, partitions: partitions, replicationFactor: replicationFactor).validate()
        guard replicationFactor <= brokerCount else {
            throw KafkaError.invalidArgument(
                "replicationFactor \(replicationFactor) for \"\(name)\" exceeds the mock cluster's \(brokerCount) brokers")
        }
        let result = try withCluster { rd_kafka_mock_topic_create($0, name, Int32(partitions), Int32(replicationFactor)) }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR && result != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS {
            throw KafkaError(result, context: "create mock topic \(name)")
        }
    }

    /// Takes broker `id` down: its connections close and it refuses new ones until ``setBrokerUp(_:)``.
    /// - Parameter id: The broker id (`1...brokerCount`); unknown ids are ignored.
    public func setBrokerDown(_ id: Int32) {
        _ = try? withCluster { rd_kafka_mock_broker_set_down($0, id) }
    }

    /// Brings broker `id` back up.
    /// - Parameter id: The broker id; unknown ids are ignored.
    public func setBrokerUp(_ id: Int32) {
        _ = try? withCluster { rd_kafka_mock_broker_set_up($0, id) }
    }

    /// Delays every response of broker `id` by `roundTripTime` (to simulate a slow network).
    /// - Parameters:
    ///   - id: The broker id; unknown ids are ignored.
    ///   - roundTripTime: The added delay (whole milliseconds).
    public func setBrokerRoundTripTime(_ id: Int32, _ roundTripTime: Duration) {
        let milliseconds = Int32(clamping: roundTripTime.kafkaMilliseconds)
        _ = try? withCluster { rd_kafka_mock_broker_set_rtt($0, id, milliseconds) }
    }

    /// Makes the next requests with `apiKey` (to any broker) fail with `errors`, one per request, in order.
    /// - Parameters:
    ///   - apiKey: The request type (see ``ApiKey``).
    ///   - errors: Broker error codes, for example ``KafkaError/Code/notLeaderForPartition``.
    public func pushRequestErrors(apiKey: Int16, errors: [KafkaError.Code]) {
        pushRequestErrors(apiKey: apiKey, errors: errors.map(\.rawValue))
    }

    /// Makes the next requests with `apiKey` fail with the raw broker error codes `errors`, in order.
    /// - Parameters:
    ///   - apiKey: The request type (see ``ApiKey``).
    ///   - errors: Raw `rd_kafka_resp_err_t` numbers.
    public func pushRequestErrors(apiKey: Int16, errors: [Int32]) {
        let codes = errors.map { rd_kafka_resp_err_t(rawValue: $0) }
        _ = try? withCluster { cluster in
            codes.withUnsafeBufferPointer {
                rd_kafka_mock_push_request_errors_array(cluster, apiKey, codes.count, $0.baseAddress)
            }
        }
    }

    /// Drops errors queued by ``pushRequestErrors(apiKey:errors:)`` for `apiKey`.
    /// - Parameter apiKey: The request type.
    public func clearRequestErrors(apiKey: Int16) {
        _ = try? withCluster { rd_kafka_mock_clear_request_errors($0, apiKey) }
    }

    /// Offers a stable bootstrap address by forwarding `host:bootstrapPort` to broker 1, so
    /// that other processes (for example the stages of `receiptd demo`, or `receiptd broker`'s
    /// clients) can connect without knowing the ephemeral broker ports.
    /// - Parameters:
    ///   - bootstrapPort: The port to listen on (9092 by convention), or 0 for any free port.
    ///   - host: The IPv4 address to listen on.
    /// - Returns: The stable `host:port` to use as bootstrap server.
    /// - Throws: ``KafkaError`` when the port cannot be bound, the cluster already listens, or it is closed.
    @discardableResult
    public func listen(bootstrapPort: UInt16 = 9092, host: String = "127.0.0.1") throws -> String {
        let firstBroker = String(bootstrapServers.split(separator: ",")[0])
        guard let colon = firstBroker.lastIndex(of: ":"),
            let targetPort = UInt16(firstBroker[firstBroker.index(after: colon)...])
        else { throw KafkaError.invalidArgument("unexpected mock bootstrap address \(firstBroker)") }
        let targetHost = String(firstBroker[..<colon])
        let address = try handles.withLock { handles -> String in
            guard handles != nil else { throw KafkaError.clientClosed("KafkaMockCluster") }
            if let existing = handles?.forwarder {
                throw KafkaError.invalidArgument("KafkaMockCluster already listens on \(existing.address)")
            }
            let forwarder = try LoopbackForwarder(
                host: host, port: bootstrapPort, targetHost: targetHost, targetPort: targetPort)
            handles?.forwarder = forwarder
            return forwarder.address
        }
        Self.register(self, addresses: [address])
        return address
    }

    /// The stable address from ``listen(bootstrapPort:host:)``, if listening.
    public var stableBootstrapServers: String? {
        handles.withLock { $0?.forwarder?.address }
    }

    /// Stops the forwarder and the brokers. Clients still connected see their brokers go away.
    /// Safe to call more than once.
    public func close() {
        guard let closing = handles.withLock({ handles -> Handles? in
            defer { handles = nil }
            return handles
        }) else { return }
        closing.forwarder?.close()
        rd_kafka_mock_cluster_destroy(closing.cluster)
        rd_kafka_destroy(closing.client)
        Self.unregister(self)
    }

    private func withCluster<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        try handles.withLock { handles in
            guard let handles else { throw KafkaError.clientClosed("KafkaMockCluster") }
            return try body(handles.cluster)
        }
    }

    // MARK: In-process registry (lets KafkaAdminClient create topics on a mock)

    private struct WeakCluster: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable class, only read under the registry lock.
        weak var cluster: KafkaMockCluster?
    }

    private static let registry = Mutex<[String: WeakCluster]>([:])

    private static func register(_ cluster: KafkaMockCluster, addresses: [String]) {
        registry.withLock { registry in
            for address in addresses { registry[address] = WeakCluster(cluster: cluster) }
        }
    }

    private static func unregister(_ cluster: KafkaMockCluster) {
        registry.withLock { registry in
            registry = registry.filter { $0.value.cluster != nil && $0.value.cluster !== cluster }
        }
    }

    /// The running in-process cluster reachable at one of `bootstrapServers`, if any.
    static func inProcess(for bootstrapServers: [String]) -> KafkaMockCluster? {
        registry.withLock { registry in
            for address in bootstrapServers {
                if let cluster = registry[address]?.cluster { return cluster }
            }
            return nil
        }
    }
}

/// The mock cluster's `log_cb`: its lines go to ``KafkaLogging`` like every client's.
private func rdKafkaMockLogCallback(_ rk: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?,
                                    _ message: UnsafePointer<CChar>?) {
    KafkaLogging.emit(KafkaLogRecord(severity: level, facility: facility.map { String(cString: $0) } ?? "",
                                     message: message.map { String(cString: $0) } ?? ""))
}
