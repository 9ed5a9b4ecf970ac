import Foundation
import Kafka
import Pipeline

/// Where the submissions a chaos run lost got to, so that a failed run (in CI, where nobody can
/// look at the broker afterwards) says which stage dropped them: every record of a stage's
/// input or retry tiers that carries one of their ids, with the offset the stage's group has
/// committed for that partition. A record at or past its group's committed offset was never
/// finished; one before it was finished without a verdict, or skipped.
struct LostSubmissionTrace {
    let harness: PipelineHarness

    /// - Returns: per lost id, one line per record found (`topic/partition/offset (group committed N)`).
    func run(_ ids: Set<String>) async -> [String: [String]] {
        guard !ids.isEmpty else { return [:] }
        let configuration = harness.configuration
        let servers = [harness.broker.bootstrapServers]
        let reader = KafkaPartitionLogReader(bootstrapServers: servers, clientId: "receiptd-chaos-trace", idleTimeout: .seconds(10))
        guard let admin = try? KafkaAdminClient(bootstrapServers: servers) else { return [:] }
        var found: [String: [String]] = [:]
        for stage in StageName.receiptStages {
            let group = configuration.groupId(for: stage)
            let partitions = configuration.inputPartitions(of: stage)
            var committed: [KafkaTopicPartition: Int64] = [:]
            for position in (try? await admin.committedOffsets(group: group, partitions: partitions)) ?? [] {
                committed[position.topicPartition] = position.offset
            }
            for topic in Set(partitions.map(\.topic)).sorted() {
                let numbers = partitions.filter { $0.topic == topic }.map(\.partition)
                do {
                    try await reader.read(topic: topic, partitions: numbers) { record in
                        guard let id = Self.submissionId(in: record.value), ids.contains(id) else { return }
                        let mark = committed[KafkaTopicPartition(topic: topic, partition: record.partition)].map { "\($0)" } ?? "nothing"
                        found[id, default: []].append("\(record.position) (\(group) committed \(mark))")
                    }
                } catch {
                    for id in ids { found[id, default: []].append("\(topic) unreadable: \(error)") }
                }
            }
        }
        return found
    }

    /// The `submissionId` of a pipeline record (every input contract carries it), or nil.
    static func submissionId(in value: [UInt8]) -> String? {
        let object = (try? JSONSerialization.jsonObject(with: Data(value))) as? [String: Any]
        return object?["submissionId"] as? String
    }
}
