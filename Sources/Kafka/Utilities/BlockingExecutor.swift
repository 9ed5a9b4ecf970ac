import Dispatch

/// A `TaskExecutor` backed by a concurrent `DispatchQueue`, for librdkafka calls that
/// block (synchronous commits, flush, metadata and watermark queries, `rd_kafka_destroy`).
///
/// Swift's cooperative pool has one thread per core (two on the build machines); a
/// blocking C call there starves every other task. Jobs enqueued here run on Dispatch
/// worker threads instead.
final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only stored property is a DispatchQueue, which is thread-safe.

    /// The executor shared by all Kafka clients in the process.
    static let shared = BlockingExecutor(label: "receiptd.kafka.blocking")

    private let queue: DispatchQueue

    init(label: String) {
        self.queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    /// Runs a Swift job on a Dispatch thread (the `TaskExecutor` requirement), so callers can
    /// use `withTaskExecutorPreference(BlockingExecutor.shared)`.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Fire-and-forget a blocking block (used from `deinit`, which cannot await).
    func execute(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    /// Runs a blocking `body` on a Dispatch thread and suspends the caller until it returns.
    ///
    /// A continuation rather than `withTaskExecutorPreference` so the body leaves the
    /// cooperative pool even when the caller is actor-isolated.
    /// - Parameter body: The blocking work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withUnsafeThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs a blocking, non-throwing `body` on a Dispatch thread.
    /// - Parameter body: The blocking work.
    /// - Returns: What `body` returns.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withUnsafeContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}
