import Synchronization

/// Where a running ``ServiceGroup`` announces a graceful shutdown to the services it runs.
///
/// A task-local, as in swift-service-lifecycle: services call
/// ``withGracefulShutdownHandler(operation:onGracefulShutdown:)`` and never need a reference to
/// the group that runs them.
public final class GracefulShutdownTrigger: Sendable {
    private struct State {
        var triggered = false
        var handlers: [Int: @Sendable () -> Void] = [:]
        var nextId = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Whether a graceful shutdown has been requested.
    public var isTriggered: Bool { state.withLock { $0.triggered } }

    /// Requests a graceful shutdown: runs every registered handler once.
    public func trigger() {
        let handlers: [@Sendable () -> Void] = state.withLock { state in
            guard !state.triggered else { return [] }
            state.triggered = true
            let all = Array(state.handlers.values)
            state.handlers.removeAll()
            return all
        }
        for handler in handlers { handler() }
    }

    /// Registers a handler; runs it at once if shutdown was already requested. Returns a token for `remove`.
    func register(_ handler: @escaping @Sendable () -> Void) -> Int? {
        let id: Int? = state.withLock { state in
            guard !state.triggered else { return nil }
            let id = state.nextId
            state.nextId += 1
            state.handlers[id] = handler
            return id
        }
        if id == nil { handler() }
        return id
    }

    /// Suspends until ``trigger()`` has been called (returns at once if it already was, or on cancellation).
    public func waitUntilTriggered() async {
        let stream = AsyncStream<Void> { continuation in
            _ = register { continuation.finish() }
        }
        for await _ in stream {}
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    @TaskLocal static var current: GracefulShutdownTrigger?
}

/// Runs `operation`; when the enclosing ``ServiceGroup`` (or test trigger) requests a graceful
/// shutdown, `onGracefulShutdown` is called (once, from any thread) so the service can stop
/// taking new work and drain.
public func withGracefulShutdownHandler<T: Sendable>(
    operation: () async throws -> T,
    onGracefulShutdown: @escaping @Sendable () -> Void
) async rethrows -> T {
    guard let trigger = GracefulShutdownTrigger.current else { return try await operation() }
    let token = trigger.register(onGracefulShutdown)
    defer { if let token { trigger.remove(token) } }
    return try await operation()
}

/// Runs `operation` with `trigger` as the graceful-shutdown source: tests use it to shut a
/// service down deterministically.
public func withGracefulShutdownTrigger<T: Sendable>(
    _ trigger: GracefulShutdownTrigger,
    operation: () async throws -> T
) async rethrows -> T {
    try await GracefulShutdownTrigger.$current.withValue(trigger) { try await operation() }
}

/// Whether the current task runs under a trigger that has fired.
public var isGracefulShutdownRequested: Bool { GracefulShutdownTrigger.current?.isTriggered ?? false }
