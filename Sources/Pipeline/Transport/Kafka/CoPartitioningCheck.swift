import Foundation
import Kafka
import Observability

/// The start-up check of a stage whose outputs are co-partitioned with its input
/// (``OutputPartitioning/inputPartition``, fulfil): the output topic needs at least as many
/// partitions as the input (each output goes to its input's partition number), and every retry
/// tier exactly as many (a retry record stays in its input's partition number, and tier `p` must
/// belong to the same group member as input `p`, which Kafka's range assignor guarantees only for
/// equal partition counts). A worker refuses to start otherwise.
public struct CoPartitioningCheck: Sendable {
    /// The input topic's partition count.
    public var input: (topic: String, partitions: Int)
    /// Each retry tier's partition count.
    public var tiers: [(topic: String, partitions: Int)]
    /// The output topic's partition count.
    public var output: (topic: String, partitions: Int)

    /// Creates a check over known partition counts.
    public init(input: (topic: String, partitions: Int), tiers: [(topic: String, partitions: Int)],
                output: (topic: String, partitions: Int)) {
        self.input = input
        self.tiers = tiers
        self.output = output
    }

    /// Compares the counts.
    /// - Throws: ``PipelineConfigurationError`` naming the topic at fault and what to do.
    public func validate() throws {
        guard output.partitions >= input.partitions else {
            throw PipelineConfigurationError("\(output.topic) has \(output.partitions) partitions but \(input.topic) has "
                + "\(input.partitions): each output goes to the partition number of the input record it came from "
                + "(that partition is also the de-duplication ledger), so \(output.topic) needs at least "
                + "\(input.partitions) partitions; add partitions to it (kafka-topics --alter --partitions \(input.partitions)) "
                + "before starting the workers")
        }
        for tier in tiers where tier.partitions != input.partitions {
            throw PipelineConfigurationError("\(tier.topic) has \(tier.partitions) partitions but \(input.topic) has "
                + "\(input.partitions): a retry record stays in its input's partition number, and partition p of every "
                + "tier must be owned by the worker that owns \(input.topic)[p], so each retry tier needs exactly "
                + "\(input.partitions) partitions")
        }
    }

    /// Reads the partition counts from the cluster and validates them.
    /// - Parameters:
    ///   - inputTopic: the stage's input.
    ///   - tierTopics: its retry tiers.
    ///   - outputTopic: the co-partitioned output.
    ///   - bootstrapServers: the cluster.
    ///   - properties: raw librdkafka properties (SASL/SSL).
    ///   - attempts: how often to ask before giving up on a missing topic (one second apart).
    /// - Throws: ``PipelineConfigurationError`` when a count is wrong or cannot be read.
    public static func verify(inputTopic: String, tierTopics: [String], outputTopic: String, bootstrapServers: [String],
                              properties: [String: String], attempts: Int = 10) async throws {
        let admin = try KafkaAdminClient(bootstrapServers: bootstrapServers, additionalProperties: properties)
        func count(_ topic: String) async throws -> Int {
            var lastError: (any Error)?
            for attempt in 0..<max(1, attempts) {
                if attempt > 0 { try await Task.sleep(for: .seconds(1)) }
                do {
                    let count = try await admin.partitionCount(topic: topic)
                    if count > 0 { return count }
                } catch {
                    lastError = error
                }
            }
            throw PipelineConfigurationError("cannot read the partition count of \(topic): "
                + (lastError.map { "\($0)" } ?? "it has no partitions"))
        }
        let check = CoPartitioningCheck(
            input: (inputTopic, try await count(inputTopic)),
            tiers: try await tierTopics.asyncMap { ($0, try await count($0)) },
            output: (outputTopic, try await count(outputTopic)))
        try check.validate()
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
