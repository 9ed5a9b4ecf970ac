import CRdKafka

// librdkafka's codes, names and classification. This is the only place that maps
// `rd_kafka_resp_err_t` / `rd_kafka_error_t` into `KafkaError`.

extension KafkaError.Code {
    /// Success; never carried by a thrown error, useful in comparisons.
    public static let noError = Self(RD_KAFKA_RESP_ERR_NO_ERROR)
    /// The local producer queue is full (`queue.buffering.max.messages`); the producer backs off.
    public static let queueFull = Self(RD_KAFKA_RESP_ERR__QUEUE_FULL)
    /// A message was not delivered within `message.timeout.ms`.
    public static let messageTimedOut = Self(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
    /// A local operation timed out.
    public static let timedOut = Self(RD_KAFKA_RESP_ERR__TIMED_OUT)
    /// No broker is reachable.
    public static let allBrokersDown = Self(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    /// A broker connection failed.
    public static let transport = Self(RD_KAFKA_RESP_ERR__TRANSPORT)
    /// The client is in the wrong state for the call (for example a partition not assigned).
    public static let state = Self(RD_KAFKA_RESP_ERR__STATE)
    /// The client raised a fatal error; see ``KafkaError/isFatal``.
    public static let fatal = Self(RD_KAFKA_RESP_ERR__FATAL)
    /// The partition is not known locally.
    public static let unknownPartition = Self(RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION)
    /// The topic is not known locally.
    public static let unknownTopic = Self(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
    /// There were no offsets to commit.
    public static let noOffset = Self(RD_KAFKA_RESP_ERR__NO_OFFSET)
    /// The consumer was not polled within `max.poll.interval.ms` and left its group.
    public static let maxPollExceeded = Self(RD_KAFKA_RESP_ERR__MAX_POLL_EXCEEDED)
    /// A local argument was invalid.
    public static let invalidArg = Self(RD_KAFKA_RESP_ERR__INVALID_ARG)
    /// Broker: the topic or partition does not exist.
    public static let unknownTopicOrPartition = Self(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    /// Broker: the partition leader is not available (typically during elections).
    public static let leaderNotAvailable = Self(RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
    /// Broker: this broker is not the partition leader.
    public static let notLeaderForPartition = Self(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
    /// Broker: the request timed out.
    public static let requestTimedOut = Self(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
    /// Broker: not enough in-sync replicas.
    public static let notEnoughReplicas = Self(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS)
    /// Broker: the topic already exists (treated as success by ``KafkaAdminClient``).
    public static let topicAlreadyExists = Self(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    /// Broker: the group is rebalancing.
    public static let rebalanceInProgress = Self(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
    /// Broker: the offset is outside the partition's range.
    public static let offsetOutOfRange = Self(RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)

    init(_ err: rd_kafka_resp_err_t) {
        self.init(rawValue: err.rawValue)
    }
}

/// Names and classification of librdkafka error codes.
enum RDKafkaErrorNames {
    /// librdkafka's symbolic name for `code` (for example `_QUEUE_FULL`).
    static func name(of code: Int32) -> String {
        String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: code)))
    }

    /// librdkafka's description of `code`.
    static func description(of code: Int32) -> String {
        String(cString: rd_kafka_err2str(rd_kafka_resp_err_t(rawValue: code)))
    }

    /// Codes after which repeating the operation may succeed. librdkafka only classifies
    /// `rd_kafka_error_t` objects, not the plain codes of delivery reports, so we mirror the
    /// Java client's `RetriableException` set plus the local transient conditions.
    private static let retriable: Set<Int32> = [
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR__QUEUE_FULL,
        RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE,
        RD_KAFKA_RESP_ERR__WAIT_COORD, RD_KAFKA_RESP_ERR__RESOLVE, RD_KAFKA_RESP_ERR__RETRY,
        RD_KAFKA_RESP_ERR__WAIT_CACHE, RD_KAFKA_RESP_ERR__NODE_UPDATE,
        RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
        RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS,
        RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR,
        RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_PREFERRED_LEADER_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT, RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED,
        RD_KAFKA_RESP_ERR_FETCH_SESSION_ID_NOT_FOUND,
    ].reduce(into: Set<Int32>()) { $0.insert($1.rawValue) }

    /// Whether `code` is usually transient.
    static func isRetriable(_ code: Int32) -> Bool {
        retriable.contains(code)
    }
}

extension KafkaError {
    /// Wraps a plain librdkafka code, using librdkafka's own text unless `message` is given.
    init(_ err: rd_kafka_resp_err_t, message: String? = nil, context: String? = nil) {
        var text = message ?? RDKafkaErrorNames.description(of: err.rawValue)
        if let context { text = "\(context): \(text)" }
        self.init(code: Code(err), message: text, isFatal: err == RD_KAFKA_RESP_ERR__FATAL)
    }

    /// Takes ownership of an `rd_kafka_error_t` (destroying it) and keeps its own classification.
    init(consuming error: OpaquePointer, context: String? = nil) {
        defer { rd_kafka_error_destroy(error) }
        var text = String(cString: rd_kafka_error_string(error))
        if let context { text = "\(context): \(text)" }
        self.init(
            code: Code(rd_kafka_error_code(error)),
            message: text,
            isRetriable: rd_kafka_error_is_retriable(error) != 0
                || RDKafkaErrorNames.isRetriable(rd_kafka_error_code(error).rawValue),
            isFatal: rd_kafka_error_is_fatal(error) != 0
        )
    }
}
