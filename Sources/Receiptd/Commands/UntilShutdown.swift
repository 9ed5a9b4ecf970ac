import Lifecycle

/// A service that does nothing until the graceful shutdown (SIGINT/SIGTERM) arrives: what keeps a
/// process whose work is an HTTP server's (the fake App Store, the notification receiver) alive.
struct UntilShutdown: Service {
    func run() async throws {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withGracefulShutdownHandler(operation: { for await _ in stream {} },
                                          onGracefulShutdown: { continuation.finish() })
    }
}
