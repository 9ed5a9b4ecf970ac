import CCurl
import Synchronization

/// The part of the client that lives on the multi thread: it owns the `CURLM`, the running
/// transfers and the pool of idle easy handles.
///
/// - Important: Confined to the single multi thread started by ``CurlMultiLoop``; nothing here
///   is locked. Other threads only ever call `curl_multi_wakeup` on the same `CURLM`, which
///   libcurl documents as thread-safe.
final class CurlMultiWorker {
    private let multi: UnsafeMutableRawPointer
    private let configuration: CurlHTTPClient.Configuration
    private let counters: CurlCounters
    /// Running transfers keyed by their easy handle (what `curl_multi_info_read` reports).
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// The same transfers keyed by id (what cancellation names).
    private var activeByID: [UInt64: CurlTransfer] = [:]
    /// Idle handles for reuse, newest last.
    private var idle: [CurlEasyHandle] = []

    init(multi: UnsafeMutableRawPointer, configuration: CurlHTTPClient.Configuration, counters: CurlCounters) {
        self.multi = multi
        self.configuration = configuration
        self.counters = counters
    }

    /// The number of transfers attached to the multi handle.
    var activeCount: Int { active.count }

    /// Attaches a transfer to the multi handle, or fails it at once if it cannot start.
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

    /// Lets libcurl make progress on every transfer, then completes the finished ones.
    func perform() {
        var running: Int32 = 0
        _ = curl_multi_perform(multi, &running)
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

    /// Blocks the multi thread until socket activity, a libcurl timer, a wakeup, or `maxWait`.
    func poll(maxWait milliseconds: Int32) {
        _ = curl_multi_poll(multi, nil, 0, milliseconds, nil)
    }

    /// Fails a transfer that never reached libcurl (or was removed from it).
    func fail(_ transfer: CurlTransfer, with error: any Error) {
        counters.failed.add(1, ordering: .relaxed)
        transfer.finish(.failure(error))
    }

    /// Fails every running transfer with ``HTTPError/Code/shutdown``, frees all handles and the
    /// multi handle. The worker is unusable afterwards.
    func shutdown() {
        for transfer in Array(active.values) {
            detach(transfer)
            fail(transfer, with: HTTPError(code: .shutdown, message: "HTTP client shut down"))
        }
        idle.removeAll()  // easy handles are cleaned up in deinit, after leaving the multi handle
        curl_multi_cleanup(multi)
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
