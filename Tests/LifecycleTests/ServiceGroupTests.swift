import Lifecycle
import Observability
import Synchronization
import Testing

/// A service that records its lifecycle and stops when asked to shut down gracefully.
private final class ProbeService: Service {
    let events = Mutex<[String]>([])
    let name: String
    let ignoresShutdown: Bool
    let failure: (any Error)?

    init(_ name: String, ignoresShutdown: Bool = false, failure: (any Error)? = nil) {
        self.name = name
        self.ignoresShutdown = ignoresShutdown
        self.failure = failure
    }

    func run() async throws {
        events.withLock { $0.append("started") }
        if let failure { throw failure }
        let ignores = ignoresShutdown
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withGracefulShutdownHandler(operation: { for await _ in stream {} },
                                          onGracefulShutdown: { if !ignores { continuation.finish() } })
        events.withLock { $0.append(Task.isCancelled ? "cancelled" : "drained") }
    }
}

private struct Boom: Error {}

@Suite struct ServiceGroupTests {
    private func group(_ services: [any Service], grace: Duration = .seconds(5)) -> ServiceGroup {
        var configuration = ServiceGroup.Configuration()
        configuration.gracefulShutdownSignals = []
        configuration.maximumGracefulShutdownDuration = grace
        return ServiceGroup(services: services, configuration: configuration, logger: .disabled)
    }

    @Test func gracefulShutdownDrainsEveryService() async throws {
        let a = ProbeService("a"), b = ProbeService("b")
        let group = group([a, b])
        async let running: Void = group.run()
        while a.events.withLock({ $0.isEmpty }) || b.events.withLock({ $0.isEmpty }) { await Task.yield() }
        group.trigger.trigger()
        try await running
        #expect(a.events.withLock { $0 } == ["started", "drained"])
        #expect(b.events.withLock { $0 } == ["started", "drained"])
    }

    @Test func oneFailingServiceShutsTheOthersDownAndRethrows() async throws {
        let ok = ProbeService("ok"), bad = ProbeService("bad", failure: Boom())
        await #expect(throws: Boom.self) { try await group([ok, bad]).run() }
        #expect(ok.events.withLock { $0 } == ["started", "drained"])
    }

    @Test func serviceIgnoringShutdownIsCancelledAfterGrace() async throws {
        let stubborn = ProbeService("stubborn", ignoresShutdown: true)
        let group = group([stubborn], grace: .milliseconds(100))
        async let running: Void = group.run()
        while stubborn.events.withLock({ $0.isEmpty }) { await Task.yield() }
        group.trigger.trigger()
        try await running
        #expect(stubborn.events.withLock { $0 } == ["started", "cancelled"])
    }
}
