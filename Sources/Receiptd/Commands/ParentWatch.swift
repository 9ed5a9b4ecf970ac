import Foundation
import Observability
#if canImport(Glibc)
import Glibc
#endif

/// Ends a worker gracefully when the harness that started it is gone.
///
/// The demo, bench and chaos harnesses (and the integration tests) start stage workers as child
/// processes. If the harness dies abnormally (SIGKILL, a crashed test runner) nothing would stop
/// them: they would keep consuming from a broker that no longer exists, forever. A harness sets
/// `RECEIPTD_PARENT_PID` to its own pid; the worker then checks once a second whether it was
/// re-parented (its parent pid changed) and, if so, starts the same graceful shutdown SIGTERM
/// would (through the service group's trigger, so there is no window before signal handlers are
/// installed in which a signal would kill it outright). Polling `getppid` rather than `PR_SET_PDEATHSIG`: the latter fires
/// when the *thread* that spawned the child exits, and Foundation spawns from whichever thread
/// calls `Process.run`.
enum ParentWatch {
    /// The environment variable a harness sets to its pid.
    static let environmentKey = "RECEIPTD_PARENT_PID"

    /// Starts watching when `RECEIPTD_PARENT_PID` is set; does nothing otherwise (production).
    /// - Parameters:
    ///   - logger: says why the worker stops.
    ///   - shutDown: starts the graceful shutdown (the service group's trigger).
    /// - Returns: the watching task (cancel it when the worker stops), or nil when not requested.
    @discardableResult
    static func startIfRequested(logger: Logger, shutDown: @escaping @Sendable () -> Void) -> Task<Void, Never>? {
        guard let raw = ProcessInfo.processInfo.environment[environmentKey], let parent = Int32(raw), parent > 1 else { return nil }
        return Task.detached {
            while getppid() == parent {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
            }
            logger.warning("parent process gone; shutting down", metadata: ["process.parent_pid": .int(Int64(parent))])
            shutDown()
        }
    }
}
