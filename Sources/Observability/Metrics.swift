import Foundation
import Synchronization

/// A process-wide registry of counters and duration summaries, shaped after swift-metrics but
/// minimal: labels are a sorted list of pairs, values live in memory, and ``snapshot()`` exposes
/// them for a summary table, tests, or (later) a Prometheus endpoint.
public final class MetricsRegistry: Sendable {
    /// A metric's identity: name plus labels.
    public struct Key: Hashable, Sendable, CustomStringConvertible {
        public var name: String
        public var labels: [Label]

        public struct Label: Hashable, Sendable {
            public var name: String
            public var value: String
        }

        public init(_ name: String, _ labels: [(String, String)] = []) {
            self.name = name
            self.labels = labels.map { Label(name: $0.0, value: $0.1) }.sorted { $0.name < $1.name }
        }

        public var description: String {
            labels.isEmpty ? name : name + "{" + labels.map { "\($0.name)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        }
    }

    /// Count, sum and max of recorded durations in seconds.
    public struct Summary: Sendable, Equatable {
        public var count: Int64 = 0
        public var sum: Double = 0
        public var max: Double = 0

        public init(count: Int64 = 0, sum: Double = 0, max: Double = 0) {
            self.count = count
            self.sum = sum
            self.max = max
        }
    }

    private struct State {
        var counters: [Key: Int64] = [:]
        var summaries: [Key: Summary] = [:]
    }

    private let state = Mutex(State())

    /// The registry stage workers report to unless given another one.
    public static let shared = MetricsRegistry()

    public init() {}

    /// Adds `amount` to a counter.
    public func increment(_ name: String, by amount: Int64 = 1, labels: [(String, String)] = []) {
        let key = Key(name, labels)
        state.withLock { $0.counters[key, default: 0] += amount }
    }

    /// Records one duration observation.
    public func record(_ name: String, seconds: Double, labels: [(String, String)] = []) {
        let key = Key(name, labels)
        state.withLock {
            var s = $0.summaries[key, default: Summary()]
            s.count += 1
            s.sum += seconds
            s.max = Swift.max(s.max, seconds)
            $0.summaries[key] = s
        }
    }

    /// The current value of a counter (0 when never incremented).
    public func counter(_ name: String, labels: [(String, String)] = []) -> Int64 {
        let key = Key(name, labels)
        return state.withLock { $0.counters[key] ?? 0 }
    }

    /// Every counter and summary at this instant.
    public func snapshot() -> (counters: [Key: Int64], summaries: [Key: Summary]) {
        state.withLock { ($0.counters, $0.summaries) }
    }
}
