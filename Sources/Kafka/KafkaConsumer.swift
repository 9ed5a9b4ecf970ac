import Dispatch
import Synchronization

/// Reads messages from Kafka as an `AsyncSequence`, with at-least-once offset handling.
///
/// A dedicated thread polls librdkafka continuously and buffers up to
/// ``KafkaConsumerConfiguration/maxBufferedMessages`` messages; beyond that it pauses every
/// assigned partition (while still polling, so the group never times the member out) and
/// resumes them once the application has drained the buffer below half.
///
/// At-least-once processing: take a message from ``messages``, process it (produce its
/// output and await the delivery report), then call ``storeOffset(_:)``. Auto-commit commits
/// only stored offsets, on revoke, and on ``close()``.
///
/// ```swift
/// let consumer = try KafkaConsumer(configuration: .init(
///     bootstrapServers: ["localhost:9092"],
///     consumptionStrategy: .group(id: "verify", topics: ["receipts.submitted"])))
/// for try await message in consumer.messages {
///     try await process(message)
///     try consumer.storeOffset(message)
/// }
/// ```
///
/// - Important: Call ``close()`` to commit the final offsets and leave the group promptly.
///   Dropping the last reference starts the same close in the background.
public final class KafkaConsumer: Sendable {
    private let runtime: Runtime
    private let client: RDKafkaConsumerClient

    /// Validates the configuration, creates the librdkafka consumer, subscribes or assigns,
    /// and starts the poll thread.
    /// - Parameter configuration: The consumer configuration.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/invalidConfiguration``) when the configuration
    ///   is invalid, or librdkafka's error when subscribing or assigning fails.
    public init(configuration: KafkaConsumerConfiguration) throws {
        try configuration.validate()
        let runtime = Runtime(configuration: configuration)
        var statistics: (@Sendable ([UInt8]) -> Void)?
        if let report = configuration.onStatistics {
            statistics = { json in
                if let decoded = KafkaStatistics.decode(json) { report(decoded) }
            }
        }
        let context = RDKafkaCallbackContext(
            error: { [runtime] in runtime.clientError($0) },
            rebalance: configuration.isGroupMember ? runtime.rebalanceHandlers : nil,
            statistics: statistics
        )
        let client = try RDKafkaConsumerClient(properties: configuration.dictionary, context: context)
        switch configuration.consumptionStrategy {
        case .group(_, let topics):
            try client.subscribe(topics)
        case .partitions(let positions):
            try client.assign(positions)
            let partitions = positions.map(\.topicPartition)
            var starts: [KafkaTopicPartition: Int64] = [:]
            for position in positions where position.offset >= 0 { starts[position.topicPartition] = position.offset }
            let generation = runtime.state.withLock { $0.didAssign(partitions, starts: starts) }
            runtime.onPartitionsAssigned?(partitions, generation)
            runtime.emit(.partitionsAssigned(partitions))
        }
        self.runtime = runtime
        self.client = client
        DedicatedThread.start(name: "kafka-consumer-poll") { [runtime, client] in
            runtime.runPollLoop(client: client)
        }
    }

    deinit {
        runtime.state.withLock { $0.requestClose() }.run(wakingWith: client.wake)
    }

    /// The messages, in order per partition. The sequence ends after ``close()``; it throws
    /// only for a fatal consumer error.
    ///
    /// - Important: Meant for one reader. Several concurrent iterators share the messages
    ///   (each message goes to exactly one of them).
    public var messages: KafkaConsumerMessages {
        KafkaConsumerMessages(runtime: runtime, client: client)
    }

    /// Assignment changes and errors, for logging and for rebuilding per-partition state.
    /// Buffers the newest 1024 events when nobody reads them.
    public var events: AsyncStream<KafkaConsumerEvent> {
        runtime.events
    }

    /// Marks `message` as processed: stores `message.offset + 1` for the next commit.
    ///
    /// Call it only after the message's effects are durable (for a stage: after the delivery
    /// report of its output). Offsets are committed by auto-commit, on revoke and on close.
    /// - Parameter message: A message obtained from ``messages``.
    /// - Throws: ``KafkaError`` with ``KafkaError/Code/partitionNotAssigned`` when the
    ///   partition was revoked meanwhile (the message will be redelivered to its new owner), or
    ///   ``KafkaError/Code/clientClosed`` after ``close()``.
    public func storeOffset(_ message: KafkaConsumerMessage) throws {
        if let error = storeOffsets(of: [KafkaTopicPartitionOffset(message.topicPartition, offset: message.offset)])[0] {
            throw error
        }
    }

    /// ``storeOffset(_:)`` for several processed messages at once, named by partition and offset
    /// (one per partition): one call into librdkafka and one pass under the consumer's lock, where
    /// a worker storing after every batch of outputs would otherwise pay both per partition.
    /// - Returns: each position's error, in order: nil where `offset + 1` was stored, else as
    ///   ``storeOffset(_:)`` would throw.
    public func storeOffsets(of processed: [KafkaTopicPartitionOffset]) -> [KafkaError?] {
        var errors = runtime.state.withLock { state in processed.map { state.checkCanStore($0.topicPartition) } }
        let allowed = processed.indices.filter { errors[$0] == nil }
        guard !allowed.isEmpty else { return errors }
        let results = client.storeOffsets(allowed.map { KafkaTopicPartitionOffset(processed[$0].topicPartition,
                                                                                   offset: processed[$0].offset + 1) })
        for (index, error) in zip(allowed, results) {
            guard let error else { continue }
            errors[index] = error.code == .state || error.code == .unknownPartition
                ? KafkaError(code: .partitionNotAssigned,
                             message: "cannot store an offset for \(processed[index].topicPartition): librdkafka no longer has it assigned (\(error.message))",
                             isRetriable: false)
                : error
        }
        let signals = runtime.state.withLock { state in
            allowed.filter { errors[$0] == nil }.flatMap { state.didStore(processed[$0].topicPartition, nextOffset: processed[$0].offset + 1) }
        }
        for signal in signals { signal.signal() }
        return errors
    }

    /// Stops delivering messages of `partitions` until ``resume(_:)``.
    ///
    /// Takes effect immediately for ``messages`` (already-buffered messages of these partitions
    /// are held back) and the poll thread pauses fetching; the consumer keeps polling, so the
    /// group membership stays alive however long the pause lasts. This pause is independent
    /// of the internal backpressure pause. A revoked partition loses its pause.
    /// - Parameter partitions: Assigned partitions to pause.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/partitionNotAssigned``) if one is not assigned.
    public func pause(_ partitions: [KafkaTopicPartition]) throws {
        try runtime.state.withLock { $0.pause(partitions) }.get().run(wakingWith: client.wake)
    }

    /// Delivers messages of `partitions` again, starting with those held back by ``pause(_:)``.
    /// - Parameter partitions: Assigned partitions to resume.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/partitionNotAssigned``) if one is not assigned.
    public func resume(_ partitions: [KafkaTopicPartition]) throws {
        try runtime.state.withLock { $0.resume(partitions) }.get().run(wakingWith: client.wake)
    }

    /// The partitions currently assigned to this consumer.
    public var assignment: [KafkaTopicPartition] {
        runtime.state.withLock { $0.assigned }.sorted()
    }

    /// The number of the partition's current assignment (what its messages carry as
    /// ``KafkaConsumerMessage/assignmentGeneration``), or nil when it is not assigned.
    public func assignmentGeneration(of partition: KafkaTopicPartition) -> UInt64? {
        runtime.state.withLock { $0.generations[partition] }
    }

    /// The current assignment's number per assigned partition (``assignmentGeneration(of:)`` for
    /// all of them under one lock, for checking a batch of messages).
    public var assignmentGenerations: [KafkaTopicPartition: UInt64] {
        runtime.state.withLock { $0.generations }
    }

    /// Blocks until every message handed out by ``messages`` for `partitions` has had its
    /// offset stored, or until `timeout`.
    ///
    /// A ready-made drain for ``KafkaConsumerConfiguration/onPartitionsRevoked``: call it from the
    /// hook so in-flight work finishes (and its offsets are committed) before the partitions move.
    /// ``KafkaConsumerConfiguration/revokeDrainTimeout`` does the same without a hook.
    /// - Important: Blocks the calling thread; never call it from a Swift task.
    /// - Parameters:
    ///   - partitions: The partitions to wait for.
    ///   - timeout: The longest wait.
    /// - Returns: `true` when settled, `false` on timeout.
    public func waitForStoredOffsets(of partitions: [KafkaTopicPartition], timeout: Duration) -> Bool {
        runtime.waitForStoredOffsets(of: partitions, timeout: timeout)
    }

    /// Whether backpressure currently has all partitions paused (for tests and metrics).
    @_spi(Testing) public var isBackpressurePaused: Bool {
        runtime.state.withLock { $0.isBackpressurePaused }
    }

    /// The quiet topics' partitions parked now (``KafkaConsumerConfiguration/quietTopics``), for
    /// tests and the workers' `receiptd_kafka_consumer_parked_partitions`.
    public var parkedPartitions: [KafkaTopicPartition] {
        runtime.state.withLock { $0.parked }.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
    }

    /// How many times backpressure paused the partitions because ``KafkaConsumerConfiguration/maxBufferedMessages``
    /// were waiting for the application (tests, and the workers' `receiptd_kafka_consumer_buffer_pauses_total`).
    public var backpressurePauseCount: Int {
        runtime.state.withLock { $0.backpressurePauseCount }
    }

    /// Asks the partition leader for a partition's low and high watermarks (the first offset
    /// still retained and the offset the next message will get).
    /// - Parameters:
    ///   - topic: The topic.
    ///   - partition: The partition.
    ///   - timeout: How long to wait for the broker.
    /// - Returns: The watermarks.
    /// - Throws: ``KafkaError`` when the broker does not answer in time or the partition is unknown.
    public func watermarks(topic: String, partition: Int32, timeout: Duration = .seconds(10)) async throws -> (
        low: Int64, high: Int64
    ) {
        let client = self.client
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        let marks = try await BlockingExecutor.shared.run {
            let marks = try client.watermarks(topic: topic, partition: partition, timeoutMilliseconds: milliseconds)
            return [marks.low, marks.high]
        }
        return (marks[0], marks[1])
    }

    /// The group's committed offsets for `partitions` (``KafkaTopicPartitionOffset/invalidOffset``
    /// where nothing was committed).
    /// - Parameters:
    ///   - partitions: The partitions to query.
    ///   - timeout: How long to wait for the coordinator.
    /// - Returns: One position per partition.
    /// - Throws: ``KafkaError`` when the coordinator does not answer in time.
    public func committed(
        _ partitions: [KafkaTopicPartition], timeout: Duration = .seconds(10)
    ) async throws -> [KafkaTopicPartitionOffset] {
        let client = self.client
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        return try await BlockingExecutor.shared.run {
            try client.committed(partitions, timeoutMilliseconds: milliseconds)
        }
    }

    /// Commits the stored offsets now and waits for the group coordinator's answer, for
    /// callers that need a durable position at a known point (before a planned hand-over,
    /// in tests). Auto-commit, revocation and ``close()`` commit anyway. Does nothing for
    /// ``KafkaConsumerConfiguration/ConsumptionStrategy/partitions(_:)`` consumers.
    /// - Throws: ``KafkaError`` when the commit fails (for example
    ///   ``KafkaError/Code/rebalanceInProgress``) or the consumer is closed.
    public func commit() async throws {
        guard runtime.commitsOffsets else { return }
        if runtime.state.withLock({ $0.lifecycle == .closed }) { throw KafkaError.clientClosed("KafkaConsumer") }
        let client = self.client
        try await BlockingExecutor.shared.run { try client.commitStoredOffsets() }
    }

    /// Ends ``messages``, commits the stored offsets, leaves the group (running the revoke
    /// hook for the final assignment) and ends ``events``. The blocking part runs on the poll
    /// thread. Safe to call more than once; every caller returns once the consumer is closed.
    public func close() async {
        runtime.state.withLock { $0.requestClose() }.run(wakingWith: client.wake)
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            if !runtime.state.withLock({ $0.addCloseWaiter(continuation) }) { continuation.resume() }
        }
    }
}
