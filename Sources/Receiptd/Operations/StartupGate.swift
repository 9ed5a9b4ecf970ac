import Lifecycle
import Observability

/// Runs a worker's start-up steps that need the brokers (topic checks) so that the worker never
/// waits silently or forever: it says every 15 s what it is waiting for, gives up after
/// `kafka.startupTimeoutSeconds` (exit 1, so the platform restarts it with backoff), and a
/// SIGTERM/SIGINT meanwhile stops it cleanly (exit 0) instead of killing it.
enum StartupGate {
    enum Outcome: Sendable { case started, shutDown }

    /// - Parameters:
    ///   - what: what is being waited for, as a log line finishes "waiting for ...".
    ///   - timeout: when to give up (zero or less: never).
    ///   - trigger: set by the signal watch; a trigger ends the wait with ``Outcome/shutDown``.
    /// - Throws: ``StartupError`` after `timeout`; what `body` threw.
    static func run(_ what: String, timeout: Duration, trigger: GracefulShutdownTrigger, logger: Logger,
                    body: @escaping @Sendable () async throws -> Void) async throws -> Outcome {
        enum Event: Sendable { case finished((any Error)?), shutdown, expired }
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        // Unstructured: a step blocked in a librdkafka call is abandoned, not awaited, when the
        // wait ends another way (the process is about to exit).
        let tasks = [
            Task {
                do { try await body(); continuation.yield(.finished(nil)) } catch { continuation.yield(.finished(error)) }
            },
            Task { await trigger.waitUntilTriggered(); continuation.yield(.shutdown) },
            Task {
                guard timeout > .zero else { return }
                try await Task.sleep(for: timeout)
                continuation.yield(.expired)
            },
            Task {
                let started = ContinuousClock.now
                while true {
                    try await Task.sleep(for: .seconds(15))
                    logger.notice("still waiting for \(what)", metadata: [
                        "waited.seconds": .integer(started.duration(to: .now).components.seconds),
                    ])
                }
            },
        ]
        defer { tasks.forEach { $0.cancel() } }
        for await event in events {
            switch event {
            case .finished(nil): return .started
            case .finished(let error?): throw error
            case .shutdown:
                logger.notice("shutdown requested while waiting for \(what); stopping")
                return .shutDown
            case .expired:
                throw StartupError("gave up waiting for \(what) after \(timeout.components.seconds) s "
                                   + "(kafka.startupTimeoutSeconds)")
            }
        }
        return .shutDown
    }
}
