import Synchronization
import AppStore

/// Keeps a verify worker's share of Apple's request budgets in step with the partitions it owns:
/// the runner calls this hook at every assignment and release (rebalance), and the share is
/// `owned / total` partitions of the verify input, so the group together never exceeds a budget
/// without any coordinator (docs/appstore-edge.md).
public final class RequestBudgetShare: PartitionAssignmentHook {
    private let budget: SharedRequestBudget
    private let inputTopic: String
    private let totalPartitions: Int
    private let owned = Mutex<Set<Int32>>([])

    /// - Parameters:
    ///   - budget: The worker's limiter (shared by its App Store clients).
    ///   - inputTopic: The stage's input; its retry tiers follow it (same partition numbers).
    ///   - totalPartitions: The input's partition count.
    public init(budget: SharedRequestBudget, inputTopic: String, totalPartitions: Int) {
        self.budget = budget
        self.inputTopic = inputTopic
        self.totalPartitions = totalPartitions
    }

    public func prepare(_ partitions: [TopicPartition], epoch: AssignmentEpoch) async throws {
        update { owned in for p in partitions where p.topic == inputTopic { owned.insert(p.partition) } }
    }

    public func release(_ partitions: [TopicPartition]) async {
        update { owned in for p in partitions where p.topic == inputTopic { owned.remove(p.partition) } }
    }

    /// Partitions of the input this worker owns now.
    public var ownedPartitions: Int { owned.withLock { $0.count } }

    private func update(_ change: (inout Set<Int32>) -> Void) {
        let count = owned.withLock { owned in change(&owned); return owned.count }
        budget.setShare(owned: count, of: totalPartitions)
    }
}
