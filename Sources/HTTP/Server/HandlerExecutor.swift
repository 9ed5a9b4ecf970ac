import Dispatch

/// Where ``HTTPServer`` runs its request handlers: a `TaskExecutor` over a concurrent
/// `DispatchQueue`, not Swift's cooperative pool.
///
/// The cooperative pool has one thread per core. When CPU-bound work in the same process occupies
/// it (a verify worker's ECDSA loop, a test suite's crypto), handlers queued there wait, and
/// clients see timeouts that have nothing to do with the server; handlers on their own Dispatch
/// threads keep answering.
final class HandlerExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only stored property is a DispatchQueue, which is thread-safe.

    /// The executor shared by every server in the process.
    static let shared = HandlerExecutor(label: "receiptd.http.handlers")

    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
