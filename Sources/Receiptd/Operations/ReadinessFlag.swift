import Synchronization

/// The readiness of a harness process (`receiptd dev`, the demo, `fake-appstore`), set by the
/// command as it goes and read by its `/readyz`.
final class ReadinessFlag: Sendable {
    private let state: Mutex<Readiness>

    init(_ initial: Readiness) {
        state = Mutex(initial)
    }

    func set(_ readiness: Readiness) {
        state.withLock { $0 = readiness }
    }

    var current: Readiness { state.withLock { $0 } }
}
