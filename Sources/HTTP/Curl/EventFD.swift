import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A Linux `eventfd` used as a doorbell: any thread rings it with ``signal()``, and the thread
/// that waits on it (through ``EpollSelector``) sees it readable and calls ``drain()``.
///
/// It replaces `curl_multi_wakeup` now that the multi thread waits in `epoll_wait` rather than in
/// `curl_multi_poll`. The counter saturates instead of queueing, so a thousand rings before the
/// waiter runs cost one wakeup.
///
/// - Important: ``close()`` must not race with ``signal()``: the owner closes the descriptor only
///   once no other thread can ring any more (``CurlMultiLoop`` rings only under its lock while
///   running, and the multi thread closes only after leaving that phase under the same lock), so a
///   late ring can never hit a reused descriptor number.
struct EventFD: Sendable {
    /// The descriptor, for registering with ``EpollSelector``.
    let descriptor: Int32

    /// Creates a non-blocking, close-on-exec eventfd with a zero counter.
    /// - Throws: ``HTTPError`` with ``HTTPError/Code/other`` when the kernel refuses (descriptor limit).
    init() throws(HTTPError) {
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else {
            throw HTTPError(code: .other, message: "eventfd failed: errno \(errno)")
        }
        self.descriptor = descriptor
    }

    /// Makes the descriptor readable. Thread-safe; never blocks (a saturated counter is already
    /// readable, so `EAGAIN` is ignored).
    func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Resets the counter so the descriptor stops being readable until the next ``signal()``.
    func drain() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, MemoryLayout<UInt64>.size)
    }

    /// Closes the descriptor; see the type's threading note.
    func close() {
        _ = Glibc.close(descriptor)
    }
}
