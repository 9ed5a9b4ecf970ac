import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the client's libcurl multi handles on one dedicated thread and is the hand-off point
/// between async callers and that thread.
///
/// Callers never block: ``submit(_:)`` and ``cancel(id:)`` append to a lock-guarded inbox and
/// ring an ``EventFD`` doorbell; the thread drains the inbox, drives libcurl's event API from an
/// epoll wait (``CurlMultiWorker/turn(maxWait:)``), and resumes each caller's continuation from
/// `curl_multi_info_read`. The lock is held only for the state transition (STYLE example 6);
/// libcurl work happens outside it.
final class CurlMultiLoop: Sendable {
    private enum Phase { case running, stopRequested, stopping, terminated }

    private struct State {
        var phase: Phase = .running
        /// Transfers submitted but not yet attached to a multi handle.
        var inbox: [CurlTransfer] = []
        /// Ids of attached transfers whose tasks were cancelled.
        var cancellations: [UInt64] = []
        /// A wakeup has been sent and the thread has not drained the inbox since; avoids one
        /// syscall per submit under load.
        var wakeupSent = false
        var terminationWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private enum Step {
        case work(inbox: [CurlTransfer], cancellations: [UInt64])
        case stop(inbox: [CurlTransfer])
    }

    /// Wakes the multi thread's epoll wait; closed by that thread only after it left `.running`.
    private let doorbell: EventFD
    private let state = Mutex(State())
    private let nextID = Atomic<UInt64>(1)
    let counters = CurlCounters()

    /// Creates the multi handles with the configured limits and starts the thread.
    /// - Throws: ``HTTPError`` when libcurl cannot be initialised or the thread cannot start.
    init(configuration: CurlHTTPClient.Configuration) throws(HTTPError) {
        let doorbell = try EventFD()
        let worker: CurlMultiWorker
        do {
            worker = try CurlMultiWorker(configuration: configuration, counters: counters, doorbell: doorbell)
        } catch {
            doorbell.close()
            throw error
        }
        self.doorbell = doorbell

        let context = Unmanaged.passRetained(ThreadContext(loop: self, worker: worker)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            let context = Unmanaged<ThreadContext>.fromOpaque(raw!).takeRetainedValue()
            context.loop.run(context.worker)
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<ThreadContext>.fromOpaque(context).release()
            worker.shutdown()  // no transfer yet, and no other thread has the doorbell
            throw HTTPError(code: .other, message: "pthread_create failed: \(created)")
        }
        pthread_detach(thread)
    }

    /// Carries the loop and its thread-confined worker into the new thread.
    private final class ThreadContext: @unchecked Sendable {
        let loop: CurlMultiLoop
        let worker: CurlMultiWorker
        init(loop: CurlMultiLoop, worker: CurlMultiWorker) {
            self.loop = loop
            self.worker = worker
        }
    }

    /// A fresh transfer id.
    func makeID() -> UInt64 {
        nextID.add(1, ordering: .relaxed).oldValue
    }

    // MARK: Called from any thread

    /// Queues a transfer for the multi thread, or fails it at once when the calling task is
    /// already cancelled or the client is shut down.
    /// - Parameter transfer: A transfer whose continuation is set.
    func submit(_ transfer: CurlTransfer) {
        let rejection: (any Error)? = state.withLock { state in
            guard state.phase == .running else {
                return HTTPError(code: .shutdown, message: "HTTP client is shut down")
            }
            // The cancelled flag is set before the cancellation handler runs, and that handler
            // takes this lock too, so checking here closes the cancel-before-submit race.
            if Task.isCancelled { return CancellationError() }
            state.inbox.append(transfer)
            wakeIfNeeded(&state)
            return nil
        }
        if let rejection {
            counters.failed.add(1, ordering: .relaxed)
            transfer.finish(.failure(rejection))
        }
    }

    /// Aborts a transfer: removed directly if it is still queued, otherwise handed to the
    /// multi thread to detach. Ids of finished transfers are harmless.
    /// - Parameter id: The transfer id.
    func cancel(id: UInt64) {
        let queued: CurlTransfer? = state.withLock { state in
            if let index = state.inbox.firstIndex(where: { $0.id == id }) {
                return state.inbox.remove(at: index)
            }
            if state.phase == .running {
                state.cancellations.append(id)
                wakeIfNeeded(&state)
            }
            return nil
        }
        if let queued {
            counters.failed.add(1, ordering: .relaxed)
            queued.finish(.failure(CancellationError()))
        }
    }

    /// Starts shutdown without waiting: queued and running transfers fail with
    /// ``HTTPError/Code/shutdown`` and the thread exits. Idempotent.
    func shutdown() {
        state.withLock { state in
            guard state.phase == .running else { return }
            state.phase = .stopRequested
            doorbell.signal()
        }
    }

    /// Suspends until the thread has exited and every libcurl handle is freed.
    func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.phase == .terminated { return true }
                state.terminationWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Wakes the multi thread at most once per drain. Called under the lock so the doorbell cannot
    /// be closed concurrently (the thread closes it only after leaving `.running` under this lock).
    private func wakeIfNeeded(_ state: inout State) {
        guard !state.wakeupSent else { return }
        state.wakeupSent = true
        doorbell.signal()
    }

    // MARK: The multi thread

    private func run(_ worker: CurlMultiWorker) {
        while true {
            let step: Step = state.withLock { state in
                state.wakeupSent = false
                let inbox = state.inbox
                state.inbox.removeAll(keepingCapacity: true)
                if state.phase == .stopRequested {
                    state.phase = .stopping
                    state.cancellations.removeAll()
                    return .stop(inbox: inbox)
                }
                let cancellations = state.cancellations
                state.cancellations.removeAll(keepingCapacity: true)
                return .work(inbox: inbox, cancellations: cancellations)
            }
            switch step {
            case .stop(let inbox):
                for transfer in inbox {
                    worker.fail(transfer, with: HTTPError(code: .shutdown, message: "HTTP client shut down"))
                }
                worker.shutdown()
                let waiters = state.withLock { state in
                    state.phase = .terminated
                    return state.terminationWaiters
                }
                for waiter in waiters { waiter.resume() }
                return
            case .work(let inbox, let cancellations):
                for transfer in inbox { worker.start(transfer) }
                for id in cancellations { worker.cancel(id: id) }
                // libcurl's timer shortens the wait; the cap only bounds idle wakeups.
                worker.turn(maxWait: 1000)
            }
        }
    }
}
