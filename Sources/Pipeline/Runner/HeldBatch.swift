import Synchronization

/// A batch's processed records not yet sent, and how the sent ones ended. Only the batch's own
/// task uses it (the delivery hook runs on that task, inside `process`); the lock is uncontended.
/// Not nested in the generic ``StageRunner``, for the reason ``PreparedRecord`` is not.
final class HeldBatch: Sendable {
    private struct State {
        var held: [PreparedRecord] = []
        var outcomes: [(WorkItem, RecordCompletion)] = []
    }

    private let state = Mutex(State())

    func hold(_ record: PreparedRecord) { state.withLock { $0.held.append(record) } }

    func takeHeld() -> [PreparedRecord] {
        state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
    }

    func finished(_ outcomes: [(WorkItem, RecordCompletion)]) { state.withLock { $0.outcomes += outcomes } }

    var outcomes: [(WorkItem, RecordCompletion)] { state.withLock { $0.outcomes } }
}
