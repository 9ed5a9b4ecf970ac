/// A long-running unit of work (a stage runner, the embedded broker, a tally consumer).
///
/// `run()` returns when the service has finished, either because its work ended or because a
/// graceful shutdown was requested (see ``withGracefulShutdownHandler(operation:onGracefulShutdown:)``)
/// and it drained. Cancellation means "stop now".
public protocol Service: Sendable {
    /// Runs the service until it finishes or shuts down.
    func run() async throws
}
