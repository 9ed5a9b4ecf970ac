import Dispatch
import Foundation

/// Holds handler tasks for the fake's latency knob on one timer thread, instead of one Dispatch
/// timer per request.
///
/// `Task.sleep` arms a Dispatch timer source per call and resumes through Dispatch's timer
/// machinery. With hundreds of requests held for 250 ms in the same process as the client being
/// measured (`receiptd bench appstore`), that bookkeeping cost about 20 µs of CPU per request
/// (perf), CPU the real App Store spends on its own machines. Here one thread sleeps until the
/// earliest deadline and resumes every waiter due by then. Deadlines are rounded *up* to the next
/// millisecond, so a wait is never shorter than asked and waiters due within the same millisecond
/// share one wakeup.
///
/// - Important: Waits cannot be cancelled (neither could the fake's `try? await Task.sleep`), and
///   the thread lives for the rest of the process, asleep while nothing waits.
final class FakeDelayLine: @unchecked Sendable {
    // @unchecked: `heap` and `sequence` are only touched with `condition` locked.

    /// The line every fake in the process shares.
    static let shared = FakeDelayLine()

    private struct Waiter {
        /// Milliseconds on the monotonic clock (`DispatchTime` uptime), rounded up.
        let deadline: UInt64
        /// Arrival order, so equal deadlines resume first come, first served.
        let sequence: UInt64
        let continuation: CheckedContinuation<Void, Never>

        func precedes(_ other: Waiter) -> Bool {
            (deadline, sequence) < (other.deadline, other.sequence)
        }
    }

    private let condition = NSCondition()
    private var heap: [Waiter] = []
    private var sequence: UInt64 = 0
    private var threadStarted = false

    /// Suspends the calling task for at least `duration`.
    /// - Parameter duration: How long to wait; zero or negative returns at once.
    func wait(for duration: Duration) async {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        let deadline = (DispatchTime.now().uptimeNanoseconds + nanoseconds + 999_999) / 1_000_000
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            sequence += 1
            push(Waiter(deadline: deadline, sequence: sequence, continuation: continuation))
            if !threadStarted {
                threadStarted = true
                Thread.detachNewThread { [self] in run() }
            }
            // Only a new earliest deadline changes how long the thread should sleep.
            if heap[0].sequence == sequence { condition.signal() }
            condition.unlock()
        }
    }

    private func run() {
        condition.lock()
        while true {
            guard let first = heap.first else {
                condition.wait()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds / 1_000_000
            if first.deadline > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(first.deadline - now) / 1000))
                continue
            }
            var due: [CheckedContinuation<Void, Never>] = []
            while let top = heap.first, top.deadline <= now { due.append(popFirst().continuation) }
            condition.unlock()
            for continuation in due { continuation.resume() }
            condition.lock()
        }
    }

    // MARK: Binary min-heap on (deadline, sequence)

    private func push(_ waiter: Waiter) {
        heap.append(waiter)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() -> Waiter {
        let first = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
            guard smallest != parent else { return first }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
