import FakeAppStore
import Observability

/// The fake App Store's own counters as scrape-time series (`receiptd fake-appstore` and the demo,
/// which hosts one), so a run's injected faults can be read next to the workers' App Store metrics.
enum FakeAppStoreMetrics {
    static func register(_ fake: FakeAppStore, in registry: MetricsRegistry) {
        let series: [(String, String, @Sendable (FakeAppStoreStatistics) -> Int)] = [
            ("requests", "answered or faulted", { $0.requests }),
            ("unauthorized", "refused with 401 (bad bearer token)", { $0.unauthorized }),
            ("dropped", "dropped without a reply (injected)", { $0.dropped }),
            ("timed-out", "held, then dropped (injected timeout)", { $0.timedOut }),
            ("server-error", "answered 5xx (injected)", { $0.serverErrors }),
            ("rate-limited", "answered 429 (injected)", { $0.rateLimited }),
            ("status-21005", "answered verifyReceipt status 21005 (injected)", { $0.status21005 }),
            ("reroute", "answered 21007/21008 (wrong environment)", { $0.reroutes }),
        ]
        for (kind, _, value) in series {
            registry.function("receiptd_fake_appstore_requests_total",
                              help: "Requests the fake App Store received, by what it did with them (requests: all).",
                              kind: .counter, labels: [("kind", kind)]) { [fake] in Double(value(fake.statistics)) }
        }
    }
}
