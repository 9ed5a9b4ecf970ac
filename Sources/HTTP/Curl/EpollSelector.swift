import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// One level-triggered epoll instance: the set of descriptors the curl multi thread waits on.
///
/// `curl_multi_poll` rebuilds a `pollfd` array of every socket on every call and the kernel
/// scans all of them, so with thousands of connections each wakeup costs O(connections). epoll
/// keeps the interest set in the kernel and reports only the ready descriptors; libcurl tells us
/// about changes to the set through its socket callback (``CurlMultiWorker``).
///
/// - Important: Not thread-safe. Only the multi thread registers, waits and closes.
final class EpollSelector {
    /// What to be told about for a descriptor.
    struct Interest: OptionSet {
        let rawValue: UInt32
        static let read = Interest(rawValue: EPOLLIN.rawValue)
        static let write = Interest(rawValue: EPOLLOUT.rawValue)
    }

    /// A ready descriptor as `epoll_wait` reported it.
    struct Event {
        /// The token the descriptor was registered with.
        let token: UInt64
        let readable: Bool
        let writable: Bool
        /// `EPOLLERR` or `EPOLLHUP`: the peer closed or the socket failed; reading reveals which.
        let failed: Bool
    }

    private let epoll: Int32
    private let events: UnsafeMutablePointer<epoll_event>
    private let capacity: Int32

    /// Creates the epoll instance.
    /// - Parameter maxEventsPerWait: How many ready descriptors one ``wait(timeoutMilliseconds:_:)``
    ///   hands back; more stay ready for the next call (level-triggered), so this bounds latency
    ///   of the doorbell, not correctness.
    /// - Throws: ``HTTPError`` with ``HTTPError/Code/other`` when the kernel refuses.
    init(maxEventsPerWait: Int = 512) throws(HTTPError) {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw HTTPError(code: .other, message: "epoll_create1 failed: errno \(errno)") }
        self.epoll = epoll
        self.capacity = Int32(max(1, maxEventsPerWait))
        self.events = .allocate(capacity: Int(capacity))
    }

    deinit {
        events.deallocate()
    }

    /// Starts or changes watching a descriptor. A descriptor already known (or unknown) to the
    /// kernel despite what the caller believed is handled by falling back to the other operation:
    /// libcurl may close a socket before telling us to forget it, and the kernel then drops it.
    /// - Parameters:
    ///   - descriptor: The socket.
    ///   - token: Handed back in every ``Event`` for this descriptor (the caller encodes whatever
    ///     it needs to route the event, such as which multi handle owns the socket).
    ///   - interest: Readability and/or writability; empty keeps it registered but silent.
    ///   - isNew: Whether the caller has not registered it before.
    /// - Returns: `false` when the kernel refused both ways (the transfer then times out).
    @discardableResult
    func watch(_ descriptor: Int32, token: UInt64, interest: Interest, isNew: Bool) -> Bool {
        var event = epoll_event()
        event.events = interest.rawValue
        event.data.u64 = token
        let first = isNew ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        if epoll_ctl(epoll, first, descriptor, &event) == 0 { return true }
        guard errno == (isNew ? EEXIST : ENOENT) else { return false }
        return epoll_ctl(epoll, isNew ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, descriptor, &event) == 0
    }

    /// Stops watching a descriptor. Errors are ignored: a descriptor that was already closed has
    /// already left the set.
    func forget(_ descriptor: Int32) {
        var unused = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, &unused)
    }

    /// Blocks until at least one descriptor is ready or the timeout passes, then reports each
    /// ready descriptor.
    /// - Parameters:
    ///   - timeoutMilliseconds: 0 to poll, -1 to wait indefinitely.
    ///   - body: Called once per ready descriptor, in kernel order.
    func wait(timeoutMilliseconds: Int32, _ body: (Event) -> Void) {
        let count = epoll_wait(epoll, events, capacity, timeoutMilliseconds)
        guard count > 0 else { return }  // 0: timed out; -1: EINTR (callers just loop)
        let failure = EPOLLERR.rawValue | EPOLLHUP.rawValue
        for index in 0..<Int(count) {
            let flags = events[index].events
            body(Event(token: events[index].data.u64,
                       readable: flags & EPOLLIN.rawValue != 0,
                       writable: flags & EPOLLOUT.rawValue != 0,
                       failed: flags & failure != 0))
        }
    }

    /// Closes the epoll instance (not the watched descriptors).
    func close() {
        _ = Glibc.close(epoll)
    }
}
