import Foundation
import Kafka
import Synchronization

/// Decides a stage worker's `/readyz` from its consumer's librdkafka statistics and its runner:
/// ready once a broker connection is up, the consumer group has finished its rebalance
/// (`join_state` steady: with partitions, or with none because the group has more members than
/// partitions, idle by design), and, for a stage with per-partition state (fulfil's ledger, the
/// owner view), no assigned partition is still being rebuilt. Statistics older than three
/// intervals mean the poll loop is stuck, which is not ready either.
final class WorkerReadiness: Sendable {
    private struct State {
        var statistics: KafkaStatistics?
        var receivedAt: ContinuousClock.Instant?
        var preparing: (@Sendable () -> Int)?
        var stopping = false
    }

    private let state = Mutex(State())
    private let group: String
    private let bootstrap: String
    private let staleAfter: Duration

    /// - Parameters:
    ///   - group: the consumer group (named in reasons).
    ///   - bootstrap: the bootstrap servers (named in reasons).
    ///   - statisticsInterval: how often statistics arrive.
    init(group: String, bootstrap: String, statisticsInterval: Duration) {
        self.group = group
        self.bootstrap = bootstrap
        staleAfter = statisticsInterval * 3 + .seconds(1)
    }

    /// A statistics report arrived (from the consumer's poll thread).
    func update(_ statistics: KafkaStatistics) {
        state.withLock {
            $0.statistics = statistics
            $0.receivedAt = .now
        }
    }

    /// How many assigned partitions are still being prepared (set once the runner exists).
    func track(preparing: @escaping @Sendable () -> Int) {
        state.withLock { $0.preparing = preparing }
    }

    /// The worker is shutting down: no longer ready.
    func stopping() {
        state.withLock { $0.stopping = true }
    }

    /// The readiness now.
    func evaluate() -> Readiness {
        let (statistics, receivedAt, preparing, stopping) = state.withLock {
            ($0.statistics, $0.receivedAt, $0.preparing, $0.stopping)
        }
        if stopping { return .notReady("shutting down") }
        guard let statistics, let receivedAt else {
            return .notReady("starting: no librdkafka statistics yet from the brokers at \(bootstrap) "
                             + "(the first come one observability.statisticsIntervalSeconds after start)")
        }
        if receivedAt.duration(to: .now) > staleAfter {
            return .notReady("librdkafka statistics are \(Int(receivedAt.duration(to: .now).components.seconds)) s old: the consumer's poll loop is stuck")
        }
        guard statistics.hasBrokerUp else {
            return .notReady("broker unreachable: no connection to \(bootstrap) is up")
        }
        guard let group = statistics.consumerGroup, group.joinState == "steady" else {
            let joinState = statistics.consumerGroup?.joinState ?? "none"
            return .notReady("waiting for consumer group \(self.group) to assign partitions (join state \(joinState))")
        }
        let unprepared = preparing?() ?? 0
        if unprepared > 0 {
            return .notReady("rebuilding the state of \(unprepared) assigned partition(s)")
        }
        if group.assignmentSize == 0 {
            return .ready("member of \(self.group) with no partitions (idle by design: more members than partitions)")
        }
        return .ready("member of \(self.group) with \(group.assignmentSize) partition(s)")
    }
}
