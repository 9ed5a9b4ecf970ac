import HTTP
import Observability

/// `/metrics`, `/healthz` and `/readyz` of one receiptd process on `observability.port`, served
/// by the libmicrohttpd ``HTTPServer``.
///
/// `/healthz` answers 200 while the process serves requests: a restart cannot fix a broker outage,
/// so liveness never depends on Kafka. `/readyz` answers 200 or 503 with the reason from
/// `readiness` in the body (see ``WorkerReadiness``).
final class OperationsServer: Sendable {
    private let server: HTTPServer

    /// The bound port.
    var port: Int { server.port }

    /// Starts serving, or returns nil when `observability.port` is 0 (off).
    /// - Throws: `ValidationError` naming `observability.port` when the port cannot be bound.
    static func start(_ configuration: WorkerConfiguration.ObservabilitySettings, registry: MetricsRegistry,
                      readiness: @escaping @Sendable () -> Readiness) throws -> OperationsServer? {
        guard configuration.port != 0 else { return nil }
        registry.function("receiptd_ready", help: "1 while /readyz answers 200, else 0.", kind: .gauge) {
            readiness().isReady ? 1 : 0
        }
        do {
            return try OperationsServer(host: configuration.host, port: configuration.port, registry: registry,
                                        readiness: readiness)
        } catch {
            throw StartupError("cannot serve metrics on observability.host \(configuration.host) observability.port "
                               + "\(configuration.port) (\(error.message)); choose another port, or 0 to turn it off")
        }
    }

    private init(host: String, port: Int, registry: MetricsRegistry,
                 readiness: @escaping @Sendable () -> Readiness) throws(HTTPServerError) {
        server = try HTTPServer(configuration: .init(host: host, port: port, threadPoolSize: 1,
                                                     maxRequestBodySize: 0, connectionTimeout: .seconds(30))) { request in
            Self.respond(to: request, registry: registry, readiness: readiness)
        }
    }

    /// The response to one request (a function, so tests can call it without a socket).
    static func respond(to request: HTTPServerRequest, registry: MetricsRegistry,
                        readiness: () -> Readiness) -> HTTPServerResponse {
        guard request.method == .get || request.method == .head else {
            return .text("only GET\n", status: 405)
        }
        switch request.path {
        case Paths.metrics:
            return HTTPServerResponse(status: 200, headers: ["Content-Type": PrometheusExposition.contentType],
                                      body: Array(PrometheusExposition.render(registry).utf8))
        case Paths.health:
            return .text("ok\n")
        case Paths.ready:
            let state = readiness()
            return .text((state.isReady ? "ready: " : "not ready: ") + state.reason + "\n", status: state.isReady ? 200 : 503)
        default:
            return .text("not found; try \(Paths.metrics), \(Paths.health) or \(Paths.ready)\n", status: 404)
        }
    }

    /// Stops serving (blocks for libmicrohttpd's threads to join).
    func stop() { server.stop() }

    /// The paths served; the Kubernetes probes and scrape annotations name these.
    enum Paths {
        static let metrics = "/metrics"
        static let health = "/healthz"
        static let ready = "/readyz"
    }
}

/// Whether a process should receive traffic (work), and why not.
struct Readiness: Sendable, Equatable {
    var isReady: Bool
    var reason: String

    static func ready(_ reason: String) -> Readiness { Readiness(isReady: true, reason: reason) }
    static func notReady(_ reason: String) -> Readiness { Readiness(isReady: false, reason: reason) }
}
