import Foundation
import Synchronization

/// Wall-clock time as the runner and the replayer see it: "now" for headers, contexts and due
/// times, and sleeping until an instant (the delay gate's scheduled resume, replay's rate limit).
///
/// Injectable so tests drive time by hand (``ManualWallClock``) and never wait real minutes.
public protocol WallClock: Sendable {
    /// The current instant.
    func now() -> Date
    /// Suspends until ``now()`` has reached `deadline` (returns at once if it already has).
    /// - Throws: `CancellationError` when the calling task is cancelled.
    func sleep(until deadline: Date) async throws
}

/// The real clock: `Date()` and `Task.sleep`.
public struct SystemWallClock: WallClock {
    /// Creates the clock.
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let interval = deadline.timeIntervalSinceNow
        guard interval > 0 else { return }
        try await Task.sleep(for: .milliseconds(Int64((interval * 1000).rounded(.up))))
    }
}

/// A clock whose "now" comes from a closure (a fixed instant in tests) and whose sleeps last the
/// real time between that "now" and the deadline. Callers re-check "now" after waking, so with a
/// frozen closure a wait simply repeats.
struct ClosureWallClock: WallClock {
    let nowBody: @Sendable () -> Date

    func now() -> Date { nowBody() }

    func sleep(until deadline: Date) async throws {
        let interval = deadline.timeIntervalSince(nowBody())
        guard interval > 0 else { return }
        try await Task.sleep(for: .milliseconds(Int64((interval * 1000).rounded(.up))))
    }
}

/// A clock that moves only when told to (``advance(by:)``), for tests of delays and rate limits.
/// Sleepers wake as soon as an advance reaches their deadline.
public final class ManualWallClock: WallClock {
    private struct State {
        var now: Date
        var sleepers: [Int: (deadline: Date, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextId = 0
    }

    private let state: Mutex<State>

    /// Creates a clock standing at `start`.
    public init(start: Date) {
        state = Mutex(State(now: start))
    }

    public func now() -> Date { state.withLock { $0.now } }

    /// How many tasks are sleeping on this clock (tests wait for a timer to be armed with it).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves the clock forward and wakes every sleeper whose deadline it reached.
    public func advance(by seconds: TimeInterval) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.addingTimeInterval(max(0, seconds))
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    public func sleep(until deadline: Date) async throws {
        let id = state.withLock { state -> Int in
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.now >= deadline { return true }
                    state.sleepers[id] = (deadline, continuation)
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
