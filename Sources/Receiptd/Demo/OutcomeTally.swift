import Foundation
import Kafka
import Pipeline
import Synchronization

/// Reads the pipeline's terminal topics (entitlement changes, rejections, outcomes, dead letters)
/// from the beginning, by explicit assignment (no consumer group, no commits), and accounts for
/// every submission by its `submissionId`.
final class OutcomeTally: Sendable {
    /// What happened to the submissions seen so far.
    struct Counts: Sendable {
        var accounted: Set<String> = []
        var entitlementsByAction: [String: Int] = [:]
        var rejectedByReason: [String: Int] = [:]
        var outcomes: [String: Int] = [:]
        var deadLetters = 0
        var deadLettersByReason: [String: Int] = [:]
        /// Terminal result per submission: `grant`, `rejected:<reason>`, `duplicate-suppressed`, ….
        var verdicts: [String: String] = [:]
        /// Entitlement events per event id (more than one means a re-emission).
        var eventIds: [String: Int] = [:]
        /// Grants/renewals per transaction id (more than one means a double grant).
        var grantsPerTransaction: [String: Int] = [:]
    }

    private let counts = Mutex(Counts())
    private let consumer: KafkaConsumer
    private let topics: Topics

    /// - Parameters:
    ///   - bootstrapServers: the cluster.
    ///   - topics: the pipeline's topic names.
    ///   - partitions: partitions per topic.
    init(bootstrapServers: [String], topics: Topics, partitions: Int) throws {
        var assignment: [KafkaTopicPartitionOffset] = []
        for topic in [topics.entitlementsChanged, topics.rejected, topics.outcomes, topics.deadLetter] {
            for p in 0..<partitions {
                assignment.append(.beginning(topic: topic, partition: Int32(p)))
            }
        }
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, consumptionStrategy: .partitions(assignment))
        configuration.clientId = "receiptd-tally"
        configuration.maxBufferedMessages = 10_000
        consumer = try KafkaConsumer(configuration: configuration)
        self.topics = topics
    }

    /// A copy of the counts now.
    var snapshot: Counts { counts.withLock { $0 } }

    /// Consumes until cancelled.
    func run() async {
        do {
            for try await message in consumer.messages {
                record(message)
            }
        } catch {}
    }

    func close() async { await consumer.close() }

    private func record(_ message: KafkaConsumerMessage) {
        let object = (try? JSONSerialization.jsonObject(with: Data(message.value))) as? [String: Any]
        let submissionId = object?["submissionId"] as? String
        counts.withLock { counts in
            switch message.topic {
            case topics.entitlementsChanged:
                let action = object?["action"] as? String ?? "?"
                counts.entitlementsByAction[action, default: 0] += 1
                if let eventId = object?["eventId"] as? String { counts.eventIds[eventId, default: 0] += 1 }
                if action == "grant" || action == "renew", let tx = object?["transactionId"] as? String {
                    counts.grantsPerTransaction[tx, default: 0] += 1
                }
                if let submissionId { counts.verdicts[submissionId] = action }
            case topics.rejected:
                let reason = object?["reason"] as? String ?? "?"
                counts.rejectedByReason[reason, default: 0] += 1
                if let submissionId { counts.verdicts[submissionId] = "rejected:" + reason }
            case topics.outcomes:
                let outcome = object?["outcome"] as? String ?? "?"
                counts.outcomes[outcome, default: 0] += 1
                if let submissionId { counts.verdicts[submissionId] = outcome }
            default:
                counts.deadLetters += 1
                let reason = message.headers.first { $0.key == RecordHeaders.reason }?.value
                    .map { String(decoding: $0, as: UTF8.self) } ?? "?"
                counts.deadLettersByReason[reason, default: 0] += 1
                if let submissionId { counts.verdicts[submissionId] = "dead-letter:" + reason }
            }
            if let submissionId { counts.accounted.insert(submissionId) }
        }
    }
}
