import CCurl

/// One `CURLM` with its share of the client's connection pool, driven through libcurl's event
/// API: libcurl tells it which sockets to watch and when its timer is due, and it runs
/// `curl_multi_socket_action` only for what is ready.
///
/// Why shards: libcurl 7.88 walks every connection in a multi handle's cache on each
/// `curl_multi_remove_handle` (looking for connect-only connections to close) and walks a host's
/// connections whenever a transfer looks for one to reuse. Against an HTTP/1.1 server with
/// thousands of requests in flight, one connection each, that is O(connections) work per request.
/// Splitting a large pool over a few multi handles on the same thread divides that work; a pool of
/// up to ``connectionsPerShard`` connections (the HTTP/2 defaults) keeps a single multi handle.
///
/// - Important: Confined to the multi thread, like the ``CurlMultiWorker`` that owns the shards.
///   The C callbacks receive the shard unretained; it outlives them because ``cleanup()`` frees
///   the `CURLM` (their only caller) while the worker still holds the shard.
final class CurlMultiShard {
    /// The pool size one multi handle serves before the pool is split.
    static let connectionsPerShard = 256
    /// Upper bound on shards, whatever the pool size.
    static let maxShards = 16

    /// How many shards a configuration's pool is split into.
    /// - Parameter configuration: The client configuration; `maxTotalConnections` (or, when that is
    ///   unlimited, `maxConnectionsPerHost`) is the pool size. An unlimited pool gets one shard.
    static func count(for configuration: CurlHTTPClient.Configuration) -> Int {
        let pool = configuration.maxTotalConnections > 0 ? configuration.maxTotalConnections
                                                         : configuration.maxConnectionsPerHost
        guard pool > connectionsPerShard else { return 1 }
        return min(maxShards, (pool + connectionsPerShard - 1) / connectionsPerShard)
    }

    /// The epoll token for one of this shard's sockets: shard index high, descriptor low.
    static func token(shard: UInt32, socket: curl_socket_t) -> UInt64 {
        UInt64(shard) << 32 | UInt64(UInt32(bitPattern: socket))
    }

    /// Position in the worker's list; the high half of this shard's epoll tokens.
    let index: UInt32
    /// The `CURLM *`, freed by ``cleanup()``.
    let multi: UnsafeMutableRawPointer
    /// Transfers currently attached; the worker starts new ones on the least loaded shard.
    var activeCount = 0
    /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; `nil` without a timer.
    private(set) var timerDeadline: ContinuousClock.Instant?
    private let selector: EpollSelector

    /// Creates the multi handle with this shard's part of the limits and installs the callbacks.
    /// - Parameters:
    ///   - index: The shard's position (must not be `UInt32.max`, the doorbell's token).
    ///   - configuration: The client configuration; connection limits are divided by `shardCount`
    ///     (rounded up, so together the shards may exceed a limit by less than `shardCount`).
    ///   - shardCount: How many shards share the pool.
    ///   - selector: The epoll instance the sockets are watched with.
    /// - Throws: ``HTTPError`` when libcurl cannot create the multi handle.
    init(index: UInt32, configuration: CurlHTTPClient.Configuration, shardCount: Int,
         selector: EpollSelector) throws(HTTPError) {
        guard let multi = curl_multi_init() else {
            throw HTTPError(code: .other, message: "curl_multi_init failed")
        }
        func share(_ limit: Int) -> Int { limit <= 0 ? 0 : (limit + shardCount - 1) / shardCount }
        let total = share(configuration.maxTotalConnections)
        let perHost = share(configuration.maxConnectionsPerHost)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, total)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maxConcurrentStreams)
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_PIPELINING,
                                    configuration.preferHTTP2 ? CCurl_CURLPIPE_MULTIPLEX() : 0)
        // Keep enough idle connections around for every concurrent one to be reused.
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(total, perHost, 16))
        self.index = index
        self.multi = multi
        self.selector = selector
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        _ = CCurl_multi_setopt_socket_function(multi, curlSocketCallback)
        _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
        _ = CCurl_multi_setopt_timer_function(multi, curlTimerCallback)
    }

    /// Lets libcurl act on one ready socket.
    /// - Parameters:
    ///   - socket: The descriptor from the event's token.
    ///   - mask: `CURL_CSELECT_IN`/`_OUT`/`_ERR` as epoll reported.
    func action(socket: curl_socket_t, mask: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, mask, &running)
    }

    /// Runs libcurl's due timeouts when the timer has expired at `now`. libcurl calls the timer
    /// callback only when its next expiry *changes*, so if this ran before libcurl considered
    /// anything expired no callback would follow; re-reading `curl_multi_timeout` then keeps the
    /// timer alive.
    func fireTimerIfDue(now: ContinuousClock.Instant) {
        guard let deadline = timerDeadline, deadline <= now else { return }
        timerDeadline = nil
        action(socket: CURL_SOCKET_TIMEOUT, mask: 0)
        if timerDeadline == nil {
            var milliseconds = -1
            if curl_multi_timeout(multi, &milliseconds) == CURLM_OK, milliseconds >= 0 {
                timerDeadline = .now + .milliseconds(milliseconds)
            }
        }
    }

    /// Hands every transfer libcurl reports done since the last call to `body`.
    /// - Parameter body: Receives the easy handle and its result, while the handle is still attached.
    func drainFinished(_ body: (UnsafeMutableRawPointer, CURLcode) -> Void) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            body(easy, message.pointee.data.result)
        }
    }

    /// Frees the multi handle (closing its cached connections); the shard is unusable afterwards.
    /// libcurl may still call the socket callback from here, so the selector must still be open.
    func cleanup() {
        curl_multi_cleanup(multi)
    }

    // MARK: libcurl's requests (called from the C callbacks, on the multi thread)

    /// `CURLMOPT_SOCKETFUNCTION`: start, change or stop watching one socket.
    /// - Parameters:
    ///   - socket: The socket libcurl is talking about.
    ///   - what: `CURL_POLL_IN`, `_OUT`, `_INOUT`, `_NONE` or `_REMOVE`.
    ///   - registered: The marker attached with `curl_multi_assign` when the socket was first
    ///     watched; `nil` for a socket new to us. libcurl drops it on removal.
    func watch(socket: curl_socket_t, what: Int32, registered: UnsafeMutableRawPointer?) {
        if what == CURL_POLL_REMOVE {
            if registered != nil { selector.forget(socket) }
            return
        }
        var interest: EpollSelector.Interest = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { interest.insert(.read) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { interest.insert(.write) }
        selector.watch(socket, token: Self.token(shard: index, socket: socket), interest: interest,
                       isNew: registered == nil)
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
}
