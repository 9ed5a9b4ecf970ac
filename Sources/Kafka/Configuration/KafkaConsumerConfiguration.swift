/// Typed configuration for ``KafkaConsumer``.
///
/// Delivery semantics are fixed rather than configurable: offsets are stored only by
/// ``KafkaConsumer/storeOffset(_:)`` (`enable.auto.offset.store=false`) and auto-commit
/// commits what was stored, which gives at-least-once processing when the application
/// stores an offset only after the message's effects are durable.
public struct KafkaConsumerConfiguration: Sendable {
    /// How the consumer obtains partitions.
    public enum ConsumptionStrategy: Sendable, Hashable {
        /// Join consumer group `id` and share `topics`' partitions with its other members.
        case group(id: String, topics: [String])
        /// Read exactly these partitions from these positions, without a group and without
        /// committing offsets (for replay tools and tests).
        case partitions([KafkaTopicPartitionOffset])
    }

    /// Where to start when the group has no committed offset (`auto.offset.reset`).
    public enum AutoOffsetReset: String, Sendable, Hashable, CaseIterable {
        /// The oldest retained message: nothing is skipped when a group starts.
        case earliest
        /// Only messages produced after the consumer starts.
        case latest
        /// Fail with an error event instead of guessing.
        case error
    }

    /// Whether messages of open or aborted transactions are returned (`isolation.level`).
    public enum IsolationLevel: String, Sendable, Hashable, CaseIterable {
        /// Only committed transactional messages (librdkafka's default).
        case readCommitted = "read_committed"
        /// Everything, including aborted transactional messages.
        case readUncommitted = "read_uncommitted"
    }

    /// How group partitions are divided (`partition.assignment.strategy`).
    public enum PartitionAssignmentStrategy: String, Sendable, Hashable, CaseIterable {
        /// Eager: contiguous ranges per topic.
        case range
        /// Eager: round robin over all partitions.
        case roundRobin = "roundrobin"
        /// Cooperative: only moved partitions are revoked.
        case cooperativeSticky = "cooperative-sticky"
    }

    /// The initial brokers, each `host:port`.
    public var bootstrapServers: [String]
    /// The `client.id` reported to brokers.
    public var clientId: String = "receiptd"
    /// Static group membership (`group.instance.id`): a member that restarts with the same id
    /// within the session timeout gets its partitions back without a rebalance. Only for ids a
    /// platform keeps stable across restarts (a StatefulSet pod name); nil (the default) is
    /// dynamic membership.
    public var groupInstanceId: String?
    /// Group membership or explicit partitions.
    public var consumptionStrategy: ConsumptionStrategy
    /// Where a group without committed offsets starts.
    public var autoOffsetReset: AutoOffsetReset = .earliest
    /// How long the group coordinator waits for heartbeats before evicting this member.
    public var sessionTimeout: Duration = .seconds(45)
    /// How often heartbeats are sent; must be shorter than ``sessionTimeout``.
    public var heartbeatInterval: Duration = .seconds(3)
    /// The longest allowed gap between polls before the member leaves the group. The
    /// consumer's own thread polls continuously (pausing partitions instead of blocking),
    /// so a slow application does not trigger it.
    public var maxPollInterval: Duration = .seconds(300)
    /// How long a rebalance waits for this member to revoke and rejoin, when the brokers wait
    /// less than ``maxPollInterval`` (a Kafka broker waits the JoinGroup's rebalance timeout,
    /// `max.poll.interval.ms`; librdkafka's mock waits its session timeout less a second). nil
    /// (the default) is ``maxPollInterval``. Not sent to the broker: drains read it.
    public var rebalanceTimeout: Duration?
    /// How often stored offsets are committed in the background.
    public var autoCommitInterval: Duration = .seconds(5)
    /// Transactional visibility.
    public var isolationLevel: IsolationLevel = .readCommitted
    /// How group partitions are divided among members.
    public var partitionAssignmentStrategy: PartitionAssignmentStrategy = .range
    /// The backpressure threshold: when more messages than this are fetched but not yet taken
    /// from ``KafkaConsumer/messages``, all assigned partitions are paused until the buffer
    /// drains below half. Before pausing, messages librdkafka has already prefetched are moved
    /// into the buffer rather than discarded (librdkafka 2.0.2 refetches discarded messages only
    /// after a fetch backoff, which cut throughput tenfold in measurements), so the buffer can
    /// exceed this by up to librdkafka's own prefetch limit (`queued.max.messages.kbytes`,
    /// 64 MB by default; lower it through ``additionalProperties`` to bound memory tighter).
    public var maxBufferedMessages: Int = 1000
    /// Called synchronously on the consumer's poll thread when partitions are revoked, before
    /// their stored offsets are committed, so in-flight work on them can be finished (with a
    /// bounded wait) and its offsets stored. Messages of those partitions still buffered are
    /// dropped before the call; they will be redelivered to the partitions' next owner.
    /// ``KafkaConsumer/waitForStoredOffsets(of:timeout:)`` is a ready-made drain.
    ///
    /// The second argument says whether the assignment was *lost* (`rd_kafka_assignment_lost`:
    /// the session timed out or the poll interval was exceeded): the group has then already
    /// handed the partitions to another member, which may be working on them now, so work in
    /// flight must be abandoned, not finished, and nothing more written for them.
    ///
    /// - Important: The hook is stored by the consumer; capture the consumer weakly (or through
    ///   a box you clear) to avoid a reference cycle.
    public var onPartitionsRevoked: (@Sendable (_ partitions: [KafkaTopicPartition], _ lost: Bool) -> Void)?
    /// Called synchronously on the consumer's poll thread when partitions are assigned (for a
    /// ``ConsumptionStrategy/partitions(_:)`` consumer: once, from `init`), before any message of
    /// them is handed out. Use it to learn an assignment in order with the messages: every
    /// message of a partition that ``KafkaConsumer/messages`` yields after this call belongs to
    /// the new assignment, and carries its `generation` (one per assignment, increasing:
    /// ``KafkaConsumerMessage/assignmentGeneration``). Keep it short; it must not block.
    ///
    /// - Important: The hook is stored by the consumer; capture the consumer weakly (or through
    ///   a box you clear) to avoid a reference cycle.
    public var onPartitionsAssigned: (@Sendable (_ partitions: [KafkaTopicPartition], _ generation: UInt64) -> Void)?
    /// When set, the revoke flow also waits (after ``onPartitionsRevoked``, at most this long)
    /// until every message handed out for the revoked partitions has had its offset stored, so
    /// those offsets are part of the commit. Useful when the application stores an offset for
    /// every message it takes (processed, skipped or dead-lettered). `nil` (the default) skips
    /// the wait.
    public var revokeDrainTimeout: Duration?
    /// How often librdkafka reports its statistics to ``onStatistics`` (`statistics.interval.ms`);
    /// nil (the default) turns them off.
    public var statisticsInterval: Duration?
    /// Called on the consumer's poll thread with each statistics report (queue depths, broker
    /// round-trip, the group's state and rebalances, each partition's lag). Keep it short.
    public var onStatistics: (@Sendable (KafkaStatistics) -> Void)?
    /// Topics that are usually empty, such as retry tiers. An assigned partition of one that has
    /// nothing left to fetch is *parked* (paused in librdkafka) and probed again every
    /// ``quietProbeInterval``: librdkafka lists every fetchable partition in every fetch request,
    /// so a busy consumer's requests otherwise carry these idle partitions on each round trip. A
    /// record written to a parked partition is read up to ``quietProbeInterval`` plus about two
    /// fetch waits late. Empty (the default): nothing is parked.
    public var quietTopics: Set<String> = []
    /// How long a quiet topic's idle partition stays parked between probes.
    public var quietProbeInterval: Duration = .seconds(1)
    /// Raw librdkafka properties passed through unchanged (SASL, SSL, fetch sizes).
    /// Keys owned by a typed field or by the fixed delivery semantics are rejected.
    public var additionalProperties: [String: String] = [:]

    /// Creates a configuration with defaults for everything but the brokers and strategy.
    /// - Parameters:
    ///   - bootstrapServers: The initial brokers, each `host:port`.
    ///   - consumptionStrategy: Group membership or explicit partitions.
    public init(bootstrapServers: [String], consumptionStrategy: ConsumptionStrategy) {
        self.bootstrapServers = bootstrapServers
        self.consumptionStrategy = consumptionStrategy
    }

    static let reservedKeys: [String: String] = [
        "bootstrap.servers": "set bootstrapServers", "metadata.broker.list": "set bootstrapServers",
        "client.id": "set clientId", "group.id": "use consumptionStrategy .group(id:topics:)",
        "group.instance.id": "set groupInstanceId",
        "enable.auto.offset.store": "offsets are stored only by storeOffset(_:) (fixed delivery semantics)",
        "enable.auto.commit": "auto-commit of stored offsets is fixed (on for groups, off for .partitions)",
        "auto.offset.reset": "set autoOffsetReset", "session.timeout.ms": "set sessionTimeout",
        "heartbeat.interval.ms": "set heartbeatInterval", "max.poll.interval.ms": "set maxPollInterval",
        "auto.commit.interval.ms": "set autoCommitInterval", "isolation.level": "set isolationLevel",
        "partition.assignment.strategy": "set partitionAssignmentStrategy",
        "enable.partition.eof": "partition EOF events are not surfaced by KafkaConsumer",
        "statistics.interval.ms": "set statisticsInterval",
    ]

    /// Checks every field and reports the first problem precisely, before any client exists.
    /// - Throws: ``KafkaError`` with code ``KafkaError/Code/invalidConfiguration``.
    public func validate() throws {
        if let problem = firstProblem() { throw KafkaError.invalidConfiguration(problem) }
    }

    private func firstProblem() -> String? {
        let field = "KafkaConsumerConfiguration"
        if let problem = KafkaNames.bootstrapProblem(bootstrapServers, field: "\(field).bootstrapServers") {
            return problem
        }
        if clientId.isEmpty { return "\(field).clientId must not be empty" }
        if let problem = strategyProblem(field: "\(field).consumptionStrategy") { return problem }
        let durations: [String?] = [
            KafkaNames.durationProblem(
                sessionTimeout, field: "\(field).sessionTimeout", atLeastMilliseconds: 1, atMostMilliseconds: 3_600_000),
            KafkaNames.durationProblem(
                heartbeatInterval, field: "\(field).heartbeatInterval", atLeastMilliseconds: 1,
                atMostMilliseconds: 3_600_000),
            KafkaNames.durationProblem(
                maxPollInterval, field: "\(field).maxPollInterval", atLeastMilliseconds: 1, atMostMilliseconds: 86_400_000),
            KafkaNames.durationProblem(
                autoCommitInterval, field: "\(field).autoCommitInterval", atLeastMilliseconds: 1,
                atMostMilliseconds: 86_400_000),
            statisticsInterval.flatMap {
                KafkaNames.durationProblem($0, field: "\(field).statisticsInterval", atLeastMilliseconds: 1,
                                           atMostMilliseconds: 86_400_000)
            },
            heartbeatInterval >= sessionTimeout
                ? "\(field).heartbeatInterval (\(heartbeatInterval)) must be shorter than sessionTimeout (\(sessionTimeout))"
                : nil,
            maxPollInterval < sessionTimeout
                ? "\(field).maxPollInterval (\(maxPollInterval)) must be at least sessionTimeout (\(sessionTimeout))"
                : nil,
            rebalanceTimeout.flatMap {
                $0 > maxPollInterval
                    ? "\(field).rebalanceTimeout (\($0)) must not exceed maxPollInterval (\(maxPollInterval))"
                    : KafkaNames.durationProblem($0, field: "\(field).rebalanceTimeout", atLeastMilliseconds: 1,
                                                 atMostMilliseconds: 86_400_000)
            },
            maxBufferedMessages < 1 ? "\(field).maxBufferedMessages must be at least 1, got \(maxBufferedMessages)" : nil,
            KafkaNames.durationProblem(
                quietProbeInterval, field: "\(field).quietProbeInterval", atLeastMilliseconds: 1, atMostMilliseconds: 3_600_000),
            revokeDrainTimeout.map { $0 < .zero ? "\(field).revokeDrainTimeout must not be negative, got \($0)" : nil } ?? nil,
            KafkaNames.reservedKeyProblem(additionalProperties, reserved: Self.reservedKeys),
        ]
        return durations.lazy.compactMap { $0 }.first
    }

    private func strategyProblem(field: String) -> String? {
        switch consumptionStrategy {
        case .group(let id, let topics):
            if id.isEmpty { return "\(field) .group(id:) must not be empty" }
            if topics.isEmpty { return "\(field) .group(topics:) must list at least one topic" }
            for topic in topics {
                if let problem = KafkaNames.topicProblem(topic, field: "\(field) .group(topics:) entry") {
                    return problem
                }
            }
            if Set(topics).count != topics.count { return "\(field) .group(topics:) lists a topic twice" }
        case .partitions(let positions):
            if positions.isEmpty { return "\(field) .partitions must list at least one partition" }
            for position in positions {
                if let problem = KafkaNames.topicProblem(position.topic, field: "\(field) .partitions topic") {
                    return problem
                }
                if position.partition < 0 {
                    return "\(field) .partitions entry \(position) has a negative partition"
                }
                let logical: Set<Int64> = [
                    KafkaTopicPartitionOffset.beginningOffset, KafkaTopicPartitionOffset.endOffset,
                    KafkaTopicPartitionOffset.storedOffset,
                ]
                if position.offset < 0 && !logical.contains(position.offset) {
                    return "\(field) .partitions entry \(position) has offset \(position.offset); use >= 0, .beginning, .end or .stored"
                }
            }
            if Set(positions.map(\.topicPartition)).count != positions.count {
                return "\(field) .partitions lists a partition twice"
            }
        }
        return nil
    }

    /// How long a probe of parked partitions lasts before they are judged again: long enough for a
    /// fetch response of theirs, which a broker may hold for `fetch.wait.max.ms` (librdkafka's
    /// default 500 ms) after a request that was itself waiting.
    var quietProbeWindow: Duration {
        let fetchWait = additionalProperties["fetch.wait.max.ms"].flatMap(Int.init) ?? 500
        return .milliseconds(max(100, 2 * fetchWait + 50))
    }

    /// librdkafka's string properties for this configuration.
    var dictionary: [String: String] {
        var properties = additionalProperties
        properties["bootstrap.servers"] = bootstrapServers.joined(separator: ",")
        properties["client.id"] = clientId
        if let groupInstanceId, !groupInstanceId.isEmpty, isGroupMember {
            properties["group.instance.id"] = groupInstanceId
        }
        properties["enable.auto.offset.store"] = "false"
        properties["enable.partition.eof"] = "false"
        properties["auto.offset.reset"] = autoOffsetReset.rawValue
        properties["session.timeout.ms"] = String(sessionTimeout.kafkaMilliseconds)
        properties["heartbeat.interval.ms"] = String(heartbeatInterval.kafkaMilliseconds)
        properties["max.poll.interval.ms"] = String(maxPollInterval.kafkaMilliseconds)
        properties["auto.commit.interval.ms"] = String(autoCommitInterval.kafkaMilliseconds)
        properties["isolation.level"] = isolationLevel.rawValue
        properties["partition.assignment.strategy"] = partitionAssignmentStrategy.rawValue
        if let statisticsInterval, onStatistics != nil {
            properties["statistics.interval.ms"] = String(statisticsInterval.kafkaMilliseconds)
        }
        switch consumptionStrategy {
        case .group(let id, _):
            properties["group.id"] = id
            properties["enable.auto.commit"] = "true"
        case .partitions:
            // librdkafka needs a group handle for assign(); a private id that commits nothing.
            properties["group.id"] = "receiptd-assign-\(UInt64.random(in: 0...UInt64.max))"
            properties["enable.auto.commit"] = "false"
        }
        return properties
    }

    /// Whether this consumer belongs to a real group (and so commits offsets).
    var isGroupMember: Bool {
        if case .group = consumptionStrategy { return true }
        return false
    }
}
