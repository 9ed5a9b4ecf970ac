import Synchronization

/// The per-record processing timeout of one runner, kept by a single timer instead of one per
/// record: each record's `process` call runs in a task registered here with its deadline, and
/// ``run(every:)`` cancels the tasks whose deadline passed. A per-record sleep racing `process`
/// armed and cancelled a dispatch timer for every record (about 6% of a stage's CPU, most of it
/// waking the timer thread); here a record costs one registration.
///
/// A timeout fires between the deadline and one tick after it.
final class ProcessingWatchdog: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let cancel: @Sendable () -> Void
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var expired: Set<Int> = []
        var nextId = 0
    }

    private let state = Mutex(State())

    /// Runs `body` in a task of its own that is cancelled once `timeout` has passed (or when the
    /// calling task is cancelled).
    /// - Returns: `body`'s result, or nil when it was cut short by the timeout.
    func run<T: Sendable>(timeout: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
        let task = Task { await body() }
        let id = state.withLock { state -> Int in
            state.nextId += 1
            state.entries[state.nextId] = Entry(deadline: .now + timeout, cancel: { task.cancel() })
            return state.nextId
        }
        let value = await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        let timedOut = state.withLock { state -> Bool in
            state.entries[id] = nil
            return state.expired.remove(id) != nil
        }
        return timedOut ? nil : value
    }

    /// Cancels overdue tasks every `tick` until the calling task is cancelled.
    func run(every tick: Duration) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: tick) } catch { return }
            expire(now: .now)
        }
    }

    /// Cancels every registered task whose deadline is at or before `now`.
    func expire(now: ContinuousClock.Instant) {
        let overdue = state.withLock { state -> [@Sendable () -> Void] in
            var cancels: [@Sendable () -> Void] = []
            for (id, entry) in state.entries where entry.deadline <= now && !state.expired.contains(id) {
                state.expired.insert(id)
                cancels.append(entry.cancel)
            }
            return cancels
        }
        for cancel in overdue { cancel() }
    }

    /// Records being processed under a deadline (tests).
    var count: Int { state.withLock { $0.entries.count } }
}
