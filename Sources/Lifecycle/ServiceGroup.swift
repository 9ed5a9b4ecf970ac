import Observability

/// Runs several ``Service``s together, as swift-service-lifecycle's group does.
///
/// The first SIGTERM/SIGINT (or ``GracefulShutdownTrigger/trigger()``) asks every service to shut
/// down gracefully; if they have not all returned within
/// ``Configuration/maximumGracefulShutdownDuration``, or a second signal arrives, the group
/// cancels them. When any service returns or throws, the others are shut down the same way, so a
/// worker never limps on with half its parts.
public struct ServiceGroup: Sendable {
    /// How the group reacts to signals and slow shutdowns.
    public struct Configuration: Sendable {
        /// Signals that start a graceful shutdown (empty: none are handled).
        public var gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint]
        /// After this long in graceful shutdown the remaining services are cancelled.
        public var maximumGracefulShutdownDuration: Duration = .seconds(30)

        public init() {}
    }

    private enum Event: Sendable {
        case serviceEnded((any Error)?)
        case signal(UnixSignal?)
        case shutdownRequested
        case graceExpired
    }

    private let services: [any Service]
    private let configuration: Configuration
    private let logger: Logger
    /// Lets a caller (a test, a parent command) request the shutdown itself.
    public let trigger: GracefulShutdownTrigger

    /// - Parameters:
    ///   - services: started together; shut down together.
    ///   - configuration: signals and grace period.
    ///   - logger: where lifecycle events go.
    ///   - trigger: the graceful-shutdown source; a fresh one by default.
    public init(services: [any Service], configuration: Configuration = .init(), logger: Logger,
                trigger: GracefulShutdownTrigger = GracefulShutdownTrigger()) {
        self.services = services
        self.configuration = configuration
        self.logger = logger
        self.trigger = trigger
    }

    /// Runs every service until all have returned.
    /// - Throws: the first error a service threw (cancellation during shutdown is not an error).
    public func run() async throws {
        let trigger = self.trigger
        let logger = self.logger
        let grace = configuration.maximumGracefulShutdownDuration
        let signals = configuration.gracefulShutdownSignals
        let firstError: (any Error)? = await withTaskGroup(of: Event.self) { group in
            for service in services {
                group.addTask {
                    do {
                        try await withGracefulShutdownTrigger(trigger) { try await service.run() }
                        return .serviceEnded(nil)
                    } catch {
                        return .serviceEnded(error)
                    }
                }
            }
            let watchSignals: @Sendable () async -> Event = {
                for await signal in UnixSignal.stream(signals) { return .signal(signal) }
                return .signal(nil)
            }
            if !signals.isEmpty { group.addTask(operation: watchSignals) }
            group.addTask {
                await trigger.waitUntilTriggered()
                return .shutdownRequested
            }

            var running = services.count
            var firstError: (any Error)?
            var graceTimerStarted = false
            while running > 0, let event = await group.next() {
                switch event {
                case .serviceEnded(let error):
                    running -= 1
                    if let error, !(error is CancellationError), firstError == nil {
                        firstError = error
                        logger.error("service failed", metadata: [LoggingKeys.errorMessage: "\(error)"])
                    }
                    trigger.trigger()
                case .signal(let signal?):
                    if trigger.isTriggered {
                        logger.warning("second signal: cancelling services", metadata: ["signal": "\(signal)"])
                        group.cancelAll()
                    } else {
                        logger.notice("graceful shutdown requested", metadata: ["signal": "\(signal)"])
                        trigger.trigger()
                    }
                    group.addTask(operation: watchSignals)
                case .signal(nil):
                    break
                case .shutdownRequested:
                    if !graceTimerStarted {
                        graceTimerStarted = true
                        group.addTask {
                            try? await Task.sleep(for: grace)
                            return .graceExpired
                        }
                    }
                case .graceExpired:
                    if !Task.isCancelled && running > 0 {
                        logger.warning("graceful shutdown timed out: cancelling services")
                    }
                    group.cancelAll()
                }
            }
            group.cancelAll()
            return firstError
        }
        if let firstError { throw firstError }
    }
}
