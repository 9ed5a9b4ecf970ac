import CCurl
import Synchronization

/// The part of the client that lives on the multi thread: it owns the `CURLM`, the epoll
/// instance libcurl's sockets are watched with, the running transfers and the pool of idle easy
/// handles.
///
/// It drives libcurl through the event ("multi_socket") API: libcurl says which sockets to watch
/// (``watch(socket:what:registered:)``) and when to call back for timeouts
/// (``timerChanged(milliseconds:)``), and ``turn(maxWait:)`` reports only the sockets that are
/// ready with `curl_multi_socket_action`. `curl_multi_perform` + `curl_multi_poll` instead walk
/// every transfer and every socket on each wakeup, which with thousands of connections open cost
/// more CPU than the requests themselves.
///
/// - Important: Confined to the single multi thread started by ``CurlMultiLoop``; nothing here is
///   locked. Other threads only ever ring the ``EventFD`` doorbell, which is registered with the
///   same epoll instance. The C callbacks receive this object unretained; it outlives them because
///   ``shutdown()`` frees the `CURLM` (the only caller of the callbacks) before anything else.
final class CurlMultiWorker {
    private let multi: UnsafeMutableRawPointer
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
    /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; `nil` when it has no timer.
    private var timerDeadline: ContinuousClock.Instant?

    /// Creates the multi handle with the configured limits and the epoll instance, and hands
    /// libcurl the socket and timer callbacks.
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
        guard selector.watch(doorbell.descriptor, interest: .read, isNew: true) else {
            selector.close()
            throw HTTPError(code: .other, message: "epoll_ctl could not watch the wakeup eventfd")
        }
        guard let multi = curl_multi_init() else {
            selector.close()
            throw HTTPError(code: .other, message: "curl_multi_init failed")
        }
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maxConcurrentStreams)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_PIPELINING,
                                    configuration.preferHTTP2 ? CCurl_CURLPIPE_MULTIPLEX() : 0)
        // Keep enough idle connections around for every concurrent one to be reused.
        let cache = max(configuration.maxTotalConnections, configuration.maxConnectionsPerHost, 16)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, cache)
        self.multi = multi
        self.selector = selector
        self.doorbell = doorbell
        self.configuration = configuration
        self.counters = counters
        installCallbacks()
    }

    /// The number of transfers attached to the multi handle.
    var activeCount: Int { active.count }

    /// Attaches a transfer to the multi handle, or fails it at once if it cannot start.
    /// libcurl answers by asking (through the timer callback) for an immediate timeout action,
    /// which the next ``turn(maxWait:)`` runs.
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
        let added = curl_multi_add_handle(multi, handle.raw)
        guard added == CURLM_OK else {
            transfer.releaseHeaderList()
            recycle(handle)
            let reason = String(cString: curl_multi_strerror(added))
            fail(transfer, with: HTTPError(code: .other, message: "curl_multi_add_handle: \(reason)"))
            return
        }
        transfer.handle = handle
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

    /// One turn of the event loop: waits for ready sockets, the doorbell, libcurl's timer or
    /// `maxWait`, lets libcurl act on what is ready, then completes the finished transfers.
    /// - Parameter maxWait: Upper bound on the wait in milliseconds; it only bounds idle wakeups,
    ///   since the doorbell and libcurl's timer end the wait when there is work.
    func turn(maxWait: Int32) {
        selector.wait(timeoutMilliseconds: waitMilliseconds(cap: maxWait)) { event in
            if event.descriptor == doorbell.descriptor {
                doorbell.drain()
                return
            }
            var mask: Int32 = 0
            if event.readable { mask |= CURL_CSELECT_IN }
            if event.writable { mask |= CURL_CSELECT_OUT }
            if event.failed { mask |= CURL_CSELECT_ERR }
            socketAction(event.descriptor, mask: mask)
        }
        if let deadline = timerDeadline, deadline <= .now {
            fireTimer()
        }
        completeFinished()
    }

    /// Fails a transfer that never reached libcurl (or was removed from it).
    func fail(_ transfer: CurlTransfer, with error: any Error) {
        counters.failed.add(1, ordering: .relaxed)
        transfer.finish(.failure(error))
    }

    /// Fails every running transfer with ``HTTPError/Code/shutdown``, frees all handles and the
    /// multi handle, and closes the epoll instance and the doorbell. The worker is unusable
    /// afterwards.
    /// - Important: Call only once no other thread can ring the doorbell.
    func shutdown() {
        for transfer in Array(active.values) {
            detach(transfer)
            fail(transfer, with: HTTPError(code: .shutdown, message: "HTTP client shut down"))
        }
        idle.removeAll()  // easy handles are cleaned up in deinit, after leaving the multi handle
        curl_multi_cleanup(multi)  // may still call the socket callback, so the selector closes after
        selector.close()
        doorbell.close()
    }

    // MARK: libcurl's requests (called from the C callbacks, on this thread)

    /// `CURLMOPT_SOCKETFUNCTION`: start, change or stop watching one socket.
    /// - Parameters:
    ///   - socket: The socket libcurl is talking about.
    ///   - what: `CURL_POLL_IN`, `_OUT`, `_INOUT`, `_NONE` or `_REMOVE`.
    ///   - registered: The pointer this worker attached to the socket with `curl_multi_assign`
    ///     when it first watched it; `nil` for a socket new to us. libcurl drops it on removal.
    func watch(socket: curl_socket_t, what: Int32, registered: UnsafeMutableRawPointer?) {
        if what == CURL_POLL_REMOVE {
            if registered != nil { selector.forget(socket) }
            return
        }
        var interest: EpollSelector.Interest = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { interest.insert(.read) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { interest.insert(.write) }
        selector.watch(socket, interest: interest, isNew: registered == nil)
        if registered == nil {
            // Any non-nil marker will do: it only tells the next call that the socket is known.
            _ = curl_multi_assign(multi, socket, UnsafeMutableRawPointer(bitPattern: 1))
        }
    }

    /// `CURLMOPT_TIMERFUNCTION`: libcurl's single timer is set (`milliseconds >= 0`, where 0 means
    /// as soon as possible) or cancelled (-1).
    func timerChanged(milliseconds: Int) {
        timerDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
    }

    // MARK: Private

    private func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        _ = CCurl_multi_setopt_socket_function(multi, curlSocketCallback)
        _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
        _ = CCurl_multi_setopt_timer_function(multi, curlTimerCallback)
    }

    /// The epoll timeout: 0 when libcurl's timer is due, the time until it (rounded up, so the
    /// wait never ends before libcurl considers the timer expired) capped at `cap`, else `cap`.
    private func waitMilliseconds(cap: Int32) -> Int32 {
        guard let deadline = timerDeadline else { return cap }
        let remaining = deadline - .now
        return Int32(min(Int(cap), remaining.clampedMilliseconds))
    }

    private func socketAction(_ socket: curl_socket_t, mask: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, mask, &running)
    }

    /// Runs libcurl's due timeouts. libcurl calls the timer callback only when its next expiry
    /// *changes*, so if this ran before anything had expired (clock skew between libcurl and us)
    /// no callback would come; re-reading `curl_multi_timeout` then keeps the timer alive.
    private func fireTimer() {
        timerDeadline = nil
        socketAction(CURL_SOCKET_TIMEOUT, mask: 0)
        if timerDeadline == nil {
            var milliseconds = -1
            if curl_multi_timeout(multi, &milliseconds) == CURLM_OK, milliseconds >= 0 {
                timerDeadline = .now + .milliseconds(milliseconds)
            }
        }
    }

    /// Completes every transfer libcurl reports done since the last call.
    private func completeFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active[easy], let handle = transfer.handle else { continue }
            let outcome = transfer.outcome(code: message.pointee.data.result, handle: handle)
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
    }

    private func detach(_ transfer: CurlTransfer) {
        guard let handle = transfer.handle else { return }
        curl_multi_remove_handle(multi, handle.raw)
        active[handle.raw] = nil
        activeByID[transfer.id] = nil
        transfer.handle = nil
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
