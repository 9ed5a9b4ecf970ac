import CCurl
import Synchronization

/// The part of the client that lives on the multi thread: it owns the multi handles (one
/// ``CurlMultiShard`` each), the epoll instance their sockets are watched with, the running
/// transfers and the pool of idle easy handles.
///
/// It drives libcurl through the event ("multi_socket") API: libcurl says which sockets to watch
/// and when to call back for timeouts, and ``turn(maxWait:)`` runs `curl_multi_socket_action`
/// only for the sockets epoll reports ready. `curl_multi_perform` + `curl_multi_poll` instead walk
/// every transfer and every socket on each wakeup, which with thousands of connections open cost
/// more CPU than the requests themselves.
///
/// - Important: Confined to the single multi thread started by ``CurlMultiLoop``; nothing here is
///   locked. Other threads only ever ring the ``EventFD`` doorbell, which is registered with the
///   same epoll instance.
final class CurlMultiWorker {
    /// The doorbell's epoll token; no shard has this index.
    private static let doorbellToken = UInt64(UInt32.max) << 32

    private let shards: [CurlMultiShard]
    private let selector: EpollSelector
    private let doorbell: EventFD
    private let configuration: CurlHTTPClient.Configuration
    private let counters: CurlCounters
    /// Running transfers keyed by their easy handle (what `curl_multi_info_read` reports).
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// The same transfers keyed by id (what cancellation names).
    private var activeByID: [UInt64: CurlTransfer] = [:]
    /// Idle handles for reuse, newest last.
    private var idle: [CurlEasyHandle] = []

    /// Creates the epoll instance and the multi handles, and watches the doorbell.
    /// - Parameters:
    ///   - configuration: Connection limits and per-request settings.
    ///   - counters: Shared with ``CurlHTTPClient/statistics``.
    ///   - doorbell: Rung by other threads; watched here and closed by ``shutdown()``.
    /// - Throws: ``HTTPError`` when libcurl or the kernel refuses.
    init(configuration: CurlHTTPClient.Configuration, counters: CurlCounters, doorbell: EventFD) throws(HTTPError) {
        guard CurlGlobal.isInitialized else {
            throw HTTPError(code: .other, message: "curl_global_init failed")
        }
        let selector = try EpollSelector()
        guard selector.watch(doorbell.descriptor, token: Self.doorbellToken, interest: .read, isNew: true) else {
            selector.close()
            throw HTTPError(code: .other, message: "epoll_ctl could not watch the wakeup eventfd")
        }
        let count = CurlMultiShard.count(for: configuration)
        var shards: [CurlMultiShard] = []
        for index in 0..<count {
            do {
                shards.append(try CurlMultiShard(index: UInt32(index), configuration: configuration,
                                                 shardCount: count, selector: selector))
            } catch {
                for shard in shards { shard.cleanup() }
                selector.close()
                throw error
            }
        }
        self.shards = shards
        self.selector = selector
        self.doorbell = doorbell
        self.configuration = configuration
        self.counters = counters
    }

    /// The number of transfers attached to the multi handles.
    var activeCount: Int { active.count }

    /// Attaches a transfer to the least loaded multi handle, or fails it at once if it cannot
    /// start. libcurl answers by asking (through the timer callback) for an immediate timeout
    /// action, which the next ``turn(maxWait:)`` runs.
    func start(_ transfer: CurlTransfer) {
        guard let handle = idle.popLast() ?? CurlEasyHandle() else {
            fail(transfer, with: HTTPError(code: .other, message: "curl_easy_init failed"))
            return
        }
        do {
            try transfer.configure(handle, configuration: configuration)
        } catch {
            transfer.releaseHeaderList()
            recycle(handle)
            fail(transfer, with: error)
            return
        }
        let shard = leastLoadedShard()
        let added = curl_multi_add_handle(shard.multi, handle.raw)
        guard added == CURLM_OK else {
            transfer.releaseHeaderList()
            recycle(handle)
            let reason = String(cString: curl_multi_strerror(added))
            fail(transfer, with: HTTPError(code: .other, message: "curl_multi_add_handle: \(reason)"))
            return
        }
        shard.activeCount += 1
        transfer.handle = handle
        transfer.shard = shard
        active[handle.raw] = transfer
        activeByID[transfer.id] = transfer
    }

    /// Aborts a running transfer because its task was cancelled; unknown ids (already finished)
    /// are ignored.
    func cancel(id: UInt64) {
        guard let transfer = activeByID[id] else { return }
        detach(transfer)
        counters.failed.add(1, ordering: .relaxed)
        transfer.finish(.failure(CancellationError()))
    }

    /// One turn of the event loop: waits for ready sockets, the doorbell, a libcurl timer or
    /// `maxWait`, lets libcurl act on what is ready, then completes the finished transfers.
    /// - Parameter maxWait: Upper bound on the wait in milliseconds; it only bounds idle wakeups,
    ///   since the doorbell and libcurl's timers end the wait when there is work.
    func turn(maxWait: Int32) {
        selector.wait(timeoutMilliseconds: waitMilliseconds(cap: maxWait)) { event in
            if event.token == Self.doorbellToken {
                doorbell.drain()
                return
            }
            let index = Int(event.token >> 32)
            guard index < shards.count else { return }
            var mask: Int32 = 0
            if event.readable { mask |= CURL_CSELECT_IN }
            if event.writable { mask |= CURL_CSELECT_OUT }
            if event.failed { mask |= CURL_CSELECT_ERR }
            shards[index].action(socket: curl_socket_t(truncatingIfNeeded: event.token), mask: mask)
        }
        let now = ContinuousClock.now
        for shard in shards { shard.fireTimerIfDue(now: now) }
        for shard in shards { shard.drainFinished(complete) }
    }

    /// Fails a transfer that never reached libcurl (or was removed from it).
    func fail(_ transfer: CurlTransfer, with error: any Error) {
        counters.failed.add(1, ordering: .relaxed)
        transfer.finish(.failure(error))
    }

    /// Fails every running transfer with ``HTTPError/Code/shutdown``, frees all handles and the
    /// multi handles, and closes the epoll instance and the doorbell. The worker is unusable
    /// afterwards.
    /// - Important: Call only once no other thread can ring the doorbell.
    func shutdown() {
        for transfer in Array(active.values) {
            detach(transfer)
            fail(transfer, with: HTTPError(code: .shutdown, message: "HTTP client shut down"))
        }
        idle.removeAll()  // easy handles are cleaned up in deinit, after leaving the multi handle
        for shard in shards { shard.cleanup() }  // may still call the socket callback: selector last
        selector.close()
        doorbell.close()
    }

    // MARK: Private

    private func leastLoadedShard() -> CurlMultiShard {
        var best = shards[0]
        for shard in shards.dropFirst() where shard.activeCount < best.activeCount { best = shard }
        return best
    }

    /// The epoll timeout: 0 when a libcurl timer is due, the time until the earliest one (rounded
    /// up, so the wait never ends before libcurl considers the timer expired) capped at `cap`,
    /// else `cap`.
    private func waitMilliseconds(cap: Int32) -> Int32 {
        var earliest: ContinuousClock.Instant?
        for shard in shards {
            if let deadline = shard.timerDeadline, earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        guard let earliest else { return cap }
        return Int32(min(Int(cap), (earliest - .now).clampedMilliseconds))
    }

    /// Completes one transfer libcurl reported done.
    private func complete(easy: UnsafeMutableRawPointer, code: CURLcode) {
        guard let transfer = active[easy], let handle = transfer.handle else { return }
        let outcome = transfer.outcome(code: code, handle: handle)
        counters.connections.add(handle.info(CURLINFO_NUM_CONNECTS), ordering: .relaxed)
        detach(transfer)
        switch outcome {
        case .success(let response):
            counters.succeeded.add(1, ordering: .relaxed)
            transfer.finish(.success(response))
        case .failure(let error):
            counters.failed.add(1, ordering: .relaxed)
            transfer.finish(.failure(error))
        }
    }

    private func detach(_ transfer: CurlTransfer) {
        guard let handle = transfer.handle, let shard = transfer.shard else { return }
        curl_multi_remove_handle(shard.multi, handle.raw)
        shard.activeCount -= 1
        active[handle.raw] = nil
        activeByID[transfer.id] = nil
        transfer.handle = nil
        transfer.shard = nil
        transfer.releaseHeaderList()
        recycle(handle)
    }

    private func recycle(_ handle: CurlEasyHandle) {
        guard idle.count < configuration.maxIdleHandles else { return }
        handle.reset()
        idle.append(handle)
    }
}

/// Lock-free counters shared between the multi thread (writer) and ``CurlHTTPClient/statistics``.
final class CurlCounters: Sendable {
    let succeeded = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let connections = Atomic<Int>(0)
}
