import Foundation
import Kafka

/// The ``PartitionLogReader`` over Kafka: one consumer per call with an explicit assignment of the
/// partitions at their beginning (no group, nothing committed), read up to the high watermarks
/// queried when the call starts, then closed.
///
/// If no record arrives for `idleTimeout` (to within a quarter of it) while partitions are
/// unfinished (the cluster is gone, or a partition ends in transaction markers, which receiptd
/// never writes), the call throws ``StalledError`` and the caller retries.
public struct KafkaPartitionLogReader: PartitionLogReader {
    /// Reading stopped before every partition was read to its end.
    public struct StalledError: Error, CustomStringConvertible {
        /// What was left unread.
        public var description: String
    }

    private let bootstrapServers: [String]
    private let properties: [String: String]
    private let clientId: String
    private let idleTimeout: Duration

    /// - Parameters:
    ///   - bootstrapServers: the cluster.
    ///   - properties: raw librdkafka properties (SASL/SSL).
    ///   - clientId: the consumers' `client.id`.
    ///   - idleTimeout: how long to wait for the next record of an unfinished partition.
    public init(bootstrapServers: [String], properties: [String: String] = [:], clientId: String = "receiptd-ledger",
                idleTimeout: Duration = .seconds(30)) {
        self.bootstrapServers = bootstrapServers
        self.properties = properties
        self.clientId = clientId
        self.idleTimeout = idleTimeout
    }

    public func read(topic: String, partitions: [Int32], _ body: (InboundRecord) throws -> Void) async throws {
        guard !partitions.isEmpty else { return }
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers,
            consumptionStrategy: .partitions(partitions.map { .beginning(topic: topic, partition: $0) }))
        configuration.clientId = clientId
        configuration.additionalProperties = properties
        configuration.maxBufferedMessages = 10_000
        let consumer = try KafkaConsumer(configuration: configuration)
        do {
            try await read(consumer, topic: topic, partitions: partitions, body)
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
    }

    private func read(_ consumer: KafkaConsumer, topic: String, partitions: [Int32],
                      _ body: (InboundRecord) throws -> Void) async throws {
        var ends: [Int32: Int64] = [:]
        for partition in partitions {
            let (low, high) = try await consumer.watermarks(topic: topic, partition: partition)
            if high > low { ends[partition] = high }
        }
        guard !ends.isEmpty else { return }
        let watchdog = ConsumerIdleWatchdog(closing: consumer, after: idleTimeout)
        defer { watchdog.stop() }
        var messages = consumer.messages.makeAsyncIterator()
        while !ends.isEmpty {
            try Task.checkCancellation()
            guard let message = try await watchdog.next(&messages) else {
                try Task.checkCancellation()
                let unread = ends.keys.sorted()
                throw StalledError(description: watchdog.fired
                    ? "no record for \(idleTimeout) while \(topic) partitions \(unread) were not read to their end"
                    : "the consumer closed before \(topic) partitions \(unread) were read")
            }
            guard message.topic == topic, let end = ends[message.partition] else { continue }
            if message.offset >= end - 1 { ends[message.partition] = nil }
            if message.offset < end { try body(InboundRecord(message)) }
        }
    }
}
