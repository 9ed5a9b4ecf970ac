import Kafka
import Synchronization
import Testing

/// A deadline passed before an awaited condition held.
struct DeadlineExceeded: Error, CustomStringConvertible {
    var what: String
    var description: String { "deadline exceeded: \(what)" }
}

/// Runs `operation`, cancelling it and throwing ``DeadlineExceeded`` after `timeout`.
/// The sleep here is a deadline, never a synchronisation point.
func withDeadline<T: Sendable>(
    _ timeout: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw DeadlineExceeded(what: what) }
        return value
    }
}

/// Polls `condition` every 50 ms until it holds, throwing ``DeadlineExceeded`` after `timeout`
/// (for state a consumer's own threads change, such as its assignment after a rebalance).
func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withDeadline(timeout, what) {
        while !condition() { try await Task.sleep(for: .milliseconds(50)) }
        return true
    }
}

/// Takes exactly `count` messages from `consumer` (storing each offset when `store` is set).
func take(
    _ count: Int, from consumer: KafkaConsumer, store: Bool = false, timeout: Duration = .seconds(15)
) async throws -> [KafkaConsumerMessage] {
    try await withDeadline(timeout, "\(count) messages") {
        var received: [KafkaConsumerMessage] = []
        var iterator = consumer.messages.makeAsyncIterator()
        while received.count < count, let message = try await iterator.next() {
            if store { try consumer.storeOffset(message) }
            received.append(message)
        }
        return received
    }
}

/// Asserts that no message arrives within `window` (for "nothing while paused").
func expectNoMessage(from consumer: KafkaConsumer, within window: Duration) async throws {
    let arrived = try await withThrowingTaskGroup(of: KafkaConsumerMessage?.self) { group in
        group.addTask {
            var iterator = consumer.messages.makeAsyncIterator()
            return try await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: window)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
    #expect(arrived == nil, "unexpected message \(String(describing: arrived))")
}

/// Waits for the first event matching `predicate`.
func awaitEvent(
    _ events: AsyncStream<KafkaConsumerEvent>, timeout: Duration = .seconds(20), _ what: String,
    where predicate: @escaping @Sendable (KafkaConsumerEvent) -> Bool
) async throws -> KafkaConsumerEvent {
    try await withDeadline(timeout, what) {
        for await event in events where predicate(event) { return event }
        throw DeadlineExceeded(what: "\(what) (event stream ended)")
    }
}

/// A topic name unique within the process.
func uniqueTopic(_ prefix: String = "t") -> String {
    "\(prefix)-\(UInt32.random(in: 0...UInt32.max))"
}

/// `n` messages with keys `k<i>`, values `v<i>` and one header, spread round-robin over `partitions`.
func makeMessages(_ n: Int, topic: String, partitions: Int32 = 1, offset start: Int = 0) -> [KafkaProducerMessage] {
    (start..<(start + n)).map { index in
        KafkaProducerMessage(
            topic: topic, partition: Int32(index) % partitions, key: "k\(index)", value: Array("v\(index)".utf8),
            headers: [KafkaHeader(key: "index", string: String(index))])
    }
}

extension KafkaProducerConfiguration {
    /// A producer for the mock cluster, quiet unless something is really wrong.
    static func test(_ bootstrapServers: String) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers.split(separator: ",").map(String.init))
        configuration.linger = .milliseconds(1)
        configuration.messageTimeout = .seconds(30)
        configuration.additionalProperties["log_level"] = "2"
        return configuration
    }
}

extension KafkaConsumerConfiguration {
    /// A consumer for the mock cluster reading explicit partitions.
    static func test(_ bootstrapServers: String, partitions: [KafkaTopicPartitionOffset]) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers.split(separator: ",").map(String.init),
            consumptionStrategy: .partitions(partitions))
        configuration.additionalProperties["log_level"] = "2"
        return configuration
    }

    /// A group consumer for the mock cluster with short timeouts, so rebalances are quick.
    static func test(_ bootstrapServers: String, group: String, topics: [String]) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers.split(separator: ",").map(String.init),
            consumptionStrategy: .group(id: group, topics: topics))
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(300)
        // max.poll.interval.ms stays at its default, not the session: librdkafka gives a JoinGroup
        // that much plus 3 s (the embedded broker's worker settings say why that matters here).
        configuration.autoCommitInterval = .milliseconds(500)
        configuration.additionalProperties["log_level"] = "2"
        return configuration
    }
}

/// A thread-safe box for test bookkeeping shared with `@Sendable` closures.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}
