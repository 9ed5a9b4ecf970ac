import Synchronization

/// A distribution of observations in fixed cumulative buckets (Prometheus `histogram`), resolved
/// once; an observation is a short linear scan of the bounds and one uncontended lock.
public final class Histogram: Sendable {
    /// Upper bounds of the buckets, ascending; `+Inf` is implicit.
    public let bounds: [Double]
    private let state: Mutex<Snapshot>

    /// Per-bucket (non-cumulative) counts, the sum and the count of observations.
    public struct Snapshot: Sendable, Equatable {
        /// Observations per bucket, the last entry being the `+Inf` overflow.
        public var buckets: [Int64]
        public var sum: Double
        public var count: Int64
    }

    /// Bucket bounds in seconds for work that takes from a millisecond to a minute.
    public static let secondsBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    init(bounds: [Double]) {
        self.bounds = bounds.sorted()
        state = Mutex(Snapshot(buckets: Array(repeating: 0, count: bounds.count + 1), sum: 0, count: 0))
    }

    /// Records one observation.
    public func observe(_ value: Double) {
        let index = bucket(of: value)
        state.withLock {
            $0.buckets[index] += 1
            $0.sum += value
            $0.count += 1
        }
    }

    /// Records several observations under one lock (a batch's, so that threads finishing batches
    /// side by side do not meet on the lock once per observation).
    public func observe(_ values: [Double]) {
        guard !values.isEmpty else { return }
        let indices = values.map(bucket(of:))
        state.withLock {
            for (index, value) in zip(indices, values) {
                $0.buckets[index] += 1
                $0.sum += value
            }
            $0.count += Int64(values.count)
        }
    }

    private func bucket(of value: Double) -> Int {
        for (i, bound) in bounds.enumerated() where value <= bound { return i }
        return bounds.count
    }

    /// Records a duration in seconds.
    public func observe(_ duration: Duration) {
        observe(duration / .seconds(1))
    }

    /// The counts at this instant.
    public var snapshot: Snapshot { state.withLock { $0 } }
}
