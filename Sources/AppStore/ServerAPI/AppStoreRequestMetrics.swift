import Observability

/// The series of App Store requests, resolved once per client: requests by endpoint, HTTP status
/// and environment, their latency per endpoint and environment, and classified failures by reason
/// code (`appstore-api-unauthorized` and `appstore-api-transaction-not-found` are the
/// configuration alarms). Every label value is one of a fixed set, never a transaction id.
public final class AppStoreRequestMetrics: Sendable {
    private struct RequestKey: Hashable, Sendable {
        var endpoint: AppStoreEndpoint
        var environment: AppStoreEnvironment
        var status: Int
    }

    private struct FailureKey: Hashable, Sendable {
        var endpoint: AppStoreEndpoint
        var environment: String
        var reason: String
    }

    private let latency: [AppStoreEndpoint: [AppStoreEnvironment: Histogram]]
    private let requests: LabelledCounters<RequestKey>
    private let failures: LabelledCounters<FailureKey>

    /// - Parameter registry: where the series go.
    public init(registry: MetricsRegistry) {
        var latency: [AppStoreEndpoint: [AppStoreEnvironment: Histogram]] = [:]
        for endpoint in AppStoreEndpoint.allCases {
            for environment in [AppStoreEnvironment.production, .sandbox] {
                latency[endpoint, default: [:]][environment] = registry.histogram(
                    "receiptd_appstore_request_duration_seconds",
                    help: "App Store request latency, transport failures included.",
                    labels: [("endpoint", endpoint.metricLabel), ("environment", Self.label(environment))])
            }
        }
        self.latency = latency
        requests = LabelledCounters { key in
            registry.counter("receiptd_appstore_requests_total",
                             help: "App Store requests by endpoint, environment and HTTP status (0: no response).",
                             labels: [("endpoint", key.endpoint.metricLabel), ("environment", Self.label(key.environment)),
                                      ("status", String(key.status))])
        }
        failures = LabelledCounters { key in
            registry.counter("receiptd_appstore_failures_total",
                             help: "App Store calls that failed, by endpoint, environment and reason code.",
                             labels: [("endpoint", key.endpoint.metricLabel), ("environment", key.environment),
                                      ("reason", key.reason)])
        }
    }

    /// One HTTP exchange ended: `status` is nil when no response arrived.
    func request(_ endpoint: AppStoreEndpoint, environment: AppStoreEnvironment, status: Int?, elapsed: Duration) {
        latency[endpoint]?[environment]?.observe(elapsed)
        requests[RequestKey(endpoint: endpoint, environment: environment, status: status ?? 0)].increment()
    }

    /// A call failed with a classified reason.
    func failure(_ endpoint: AppStoreEndpoint, environment: AppStoreEnvironment?, reason: AppStoreFailureReason) {
        failures[FailureKey(endpoint: endpoint, environment: environment.map(Self.label) ?? "none", reason: reason.code)]
            .increment()
    }

    static func label(_ environment: AppStoreEnvironment) -> String { environment.rawValue.lowercased() }
}
