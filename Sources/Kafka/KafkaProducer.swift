/// Produces messages to Kafka and reports each one's delivery.
///
/// ``send(_:)`` returns only once the broker has acknowledged the message (the delivery
/// report), so a caller can safely store its input's offset afterwards: produce, await the
/// report, then store. A dedicated thread serves librdkafka's delivery callbacks; the
/// cooperative pool never blocks.
///
/// ```swift
/// let producer = try KafkaProducer(configuration: .init(bootstrapServers: ["localhost:9092"]))
/// let report = try await producer.send(KafkaProducerMessage(topic: "receipts.submitted", key: "tx-1", value: bytes))
/// await producer.close()
/// ```
///
/// - Important: Call ``close()`` before dropping the last reference; it flushes outstanding
///   messages. Dropping the producer without closing discards them.
public final class KafkaProducer: Sendable {
    private let client: RDKafkaProducerClient
    private let deliveries: KafkaProducerDeliveries
    private let configuration: KafkaProducerConfiguration

    /// Validates the configuration, creates the librdkafka producer and starts its poll thread.
    /// - Parameter configuration: The producer configuration.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/invalidConfiguration``) when the configuration is invalid.
    public init(configuration: KafkaProducerConfiguration) throws {
        try configuration.validate()
        let deliveries = KafkaProducerDeliveries()
        var statistics: (@Sendable ([UInt8]) -> Void)?
        if let report = configuration.onStatistics {
            statistics = { json in
                if let decoded = KafkaStatistics.decode(json) { report(decoded) }
            }
        }
        let context = RDKafkaCallbackContext(
            delivery: { [deliveries] in deliveries.complete($0) },
            error: { [deliveries] error in if error.isFatal { deliveries.recordFatal(error) } },
            statistics: statistics
        )
        let client = try RDKafkaProducerClient(properties: configuration.dictionary, context: context)
        self.client = client
        self.deliveries = deliveries
        self.configuration = configuration

        DedicatedThread.start(name: "kafka-producer-poll") { [client, deliveries] in
            while !deliveries.isStopRequested {
                client.poll(timeoutMilliseconds: 100)
            }
            deliveries.pollThreadExited()
        }
    }

    deinit {
        deliveries.requestStop()
        client.wake()
    }

    /// Sends one message and waits for its delivery report.
    ///
    /// When librdkafka's local queue is full the call backs off and retries instead of failing.
    /// - Parameter message: The message.
    /// - Returns: Where the message was written.
    /// - Throws: ``KafkaError`` when delivery failed (for example
    ///   ``KafkaError/Code/messageTimedOut``), the producer is closed, or the task was cancelled
    ///   while waiting for queue space (``KafkaError/Code/cancelled``; nothing was sent).
    public func send(_ message: KafkaProducerMessage) async throws -> KafkaDeliveryReport {
        var backoff = QueueFullBackoff()
        while true {
            let attempt = try await withUnsafeThrowingContinuation {
                (continuation: UnsafeContinuation<KafkaSendAttempt, any Error>) in
                switch deliveries.register(.single(topic: message.topic, continuation)) {
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .success(let id):
                    guard let error = client.produce(message, id: id) else { return }
                    deliveries.remove(id)
                    if error.code == .queueFull {
                        continuation.resume(returning: .queueFull)
                    } else {
                        continuation.resume(throwing: error)
                    }
                }
            }
            switch attempt {
            case .delivered(let report):
                return report
            case .queueFull:
                try await backoff.wait()
            }
        }
    }

    /// Sends messages in order and waits for all their delivery reports.
    ///
    /// Cheaper than one ``send(_:)`` per message: one continuation for the whole batch.
    /// Messages are enqueued in order, so those with the same partition keep their order.
    /// - Parameter messages: The messages.
    /// - Returns: One report per message, in the same order.
    /// - Throws: The first failure in message order, after every message has an outcome
    ///   (so no message is still in flight when this throws).
    public func sendAll(_ messages: [KafkaProducerMessage]) async throws -> [KafkaDeliveryReport] {
        if messages.isEmpty { return [] }
        let batch = KafkaDeliveryBatch(count: messages.count)
        var backoff = QueueFullBackoff()
        var abandon: KafkaError?
        for (index, message) in messages.enumerated() {
            if let abandon {
                batch.complete(index, with: .failure(abandon))
                continue
            }
            enqueue: while true {
                switch deliveries.register(.batch(topic: message.topic, batch, index: index)) {
                case .failure(let error):
                    batch.complete(index, with: .failure(error))
                    abandon = error
                    break enqueue
                case .success(let id):
                    guard let error = client.produce(message, id: id) else {
                        backoff.reset()
                        break enqueue
                    }
                    deliveries.remove(id)
                    guard error.code == .queueFull else {
                        batch.complete(index, with: .failure(error))
                        break enqueue
                    }
                    do {
                        try await backoff.wait()
                    } catch {
                        let cancelled = error as? KafkaError ?? KafkaError(code: .cancelled, message: "\(error)")
                        batch.complete(index, with: .failure(cancelled))
                        abandon = cancelled
                        break enqueue
                    }
                }
            }
        }
        return try await batch.results().map { try $0.get() }
    }

    /// Waits until every message sent so far has a delivery report.
    /// - Parameter timeout: How long to wait.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/timedOut``) when messages are still outstanding.
    public func flush(timeout: Duration) async throws {
        let client = self.client
        let milliseconds = Int32(clamping: timeout.kafkaMilliseconds)
        if let error = await BlockingExecutor.shared.run({ client.flush(timeoutMilliseconds: milliseconds) }) {
            throw error
        }
    }

    /// Messages handed to librdkafka whose delivery report has not been served yet.
    public var outstandingCount: Int { client.outstandingCount }

    /// Gives up on every message not yet sent to a broker: their sends fail (librdkafka's
    /// `_PURGE_QUEUE`) and they are never written. A message already in a request keeps its
    /// outcome. For a writer that has just lost the right to write (a consumer group took its
    /// partitions away): nothing it queued may land after the next owner has started.
    /// - Throws: ``KafkaError`` when librdkafka refuses.
    public func discardUnsent() throws {
        if let error = client.purgeQueued() { throw error }
    }

    /// Flushes outstanding messages (waiting at most the configured message timeout), stops
    /// the poll thread and fails anything still pending with ``KafkaError/Code/clientClosed``.
    /// Later sends fail with ``KafkaError/Code/clientClosed``. Safe to call more than once.
    public func close() async {
        guard await deliveries.beginClosing() else { return }
        let client = self.client
        let milliseconds = Int32(clamping: configuration.messageTimeout.kafkaMilliseconds)
        _ = await BlockingExecutor.shared.run { client.flush(timeoutMilliseconds: milliseconds) }
        deliveries.requestStop()
        client.wake()
        await deliveries.waitForPollThreadExit()
        deliveries.finishClosing()
    }
}

/// Exponential backoff while librdkafka's queue is full: 1 ms doubling to 50 ms.
struct QueueFullBackoff {
    private var delay: Duration = .milliseconds(1)

    mutating func reset() {
        delay = .milliseconds(1)
    }

    /// Sleeps for the current delay and doubles it.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/cancelled``) when the task is cancelled.
    mutating func wait() async throws {
        do {
            try await Task.sleep(for: delay)
        } catch {
            throw KafkaError(
                code: .cancelled, message: "cancelled while waiting for space in the producer queue",
                isRetriable: false)
        }
        delay = min(delay * 2, .milliseconds(50))
    }
}
