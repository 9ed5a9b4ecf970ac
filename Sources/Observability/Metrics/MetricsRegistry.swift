import Synchronization

/// The process's metrics, shaped after swift-metrics but minimal: a series (name plus labels) is
/// resolved once into a ``Counter``, ``Gauge`` or ``Histogram`` handle that callers keep, so the
/// hot path never builds label strings or touches a dictionary; the registry is read only when
/// it is rendered (``PrometheusExposition``) or inspected by tests.
///
/// Values that something else already keeps (a runner's in-flight count) are registered as
/// *functions* read at scrape time, which costs nothing per record.
public final class MetricsRegistry: Sendable {
    /// The Prometheus type of a family.
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// One series' storage.
    enum Series: Sendable {
        case counter(Counter)
        case gauge(Gauge)
        case histogram(Histogram)
        case function(@Sendable () -> Double)
    }

    struct Family: Sendable {
        var name: String
        var help: String
        var kind: Kind
        /// Keyed by the rendered label set (`{a="x",b="y"}`, or empty), which is also the order.
        var series: [String: Series] = [:]
    }

    private let store = Mutex<[String: Family]>([:])

    /// The registry workers report to unless given another one.
    public static let shared = MetricsRegistry()

    public init() {}

    /// The counter `name{labels}`, created on first use. Keep the handle.
    /// - Parameters:
    ///   - name: a Prometheus name ending in `_total`.
    ///   - help: one line saying what is counted.
    ///   - labels: bounded label pairs (never a user, transaction or bundle id beyond configuration).
    public func counter(_ name: String, help: String, labels: [(String, String)] = []) -> Counter {
        resolve(name, help: help, kind: .counter, labels: labels, make: { .counter(Counter()) }) {
            if case .counter(let c) = $0 { return c } else { return nil }
        }
    }

    /// The gauge `name{labels}`, created on first use. Keep the handle.
    public func gauge(_ name: String, help: String, labels: [(String, String)] = []) -> Gauge {
        resolve(name, help: help, kind: .gauge, labels: labels, make: { .gauge(Gauge()) }) {
            if case .gauge(let g) = $0 { return g } else { return nil }
        }
    }

    /// The histogram `name{labels}`, created on first use with `buckets` (seconds by default).
    public func histogram(_ name: String, help: String, labels: [(String, String)] = [],
                          buckets: [Double] = Histogram.secondsBuckets) -> Histogram {
        resolve(name, help: help, kind: .histogram, labels: labels, make: { .histogram(Histogram(bounds: buckets)) }) {
            if case .histogram(let h) = $0 { return h } else { return nil }
        }
    }

    /// A series whose value is read from `body` at scrape time (replacing an earlier one of the
    /// same name and labels). `kind` is `.counter` or `.gauge`.
    public func function(_ name: String, help: String, kind: Kind, labels: [(String, String)] = [],
                         _ body: @escaping @Sendable () -> Double) {
        precondition(kind != .histogram, "a function series is a counter or a gauge")
        let key = Self.labelKey(labels)
        store.withLock { families in
            var family = families[name] ?? Family(name: name, help: help, kind: kind)
            precondition(family.kind == kind, "metric \(name) registered as \(family.kind) and \(kind)")
            family.series[key] = .function(body)
            families[name] = family
        }
    }

    /// Removes the series `name{labels}` (a partition no longer assigned).
    public func remove(_ name: String, labels: [(String, String)]) {
        let key = Self.labelKey(labels)
        store.withLock { _ = $0[name]?.series.removeValue(forKey: key) }
    }

    /// The value of a counter or gauge series (tests, summaries); nil when it does not exist.
    public func value(_ name: String, labels: [(String, String)] = []) -> Double? {
        let key = Self.labelKey(labels)
        guard let series = store.withLock({ $0[name]?.series[key] }) else { return nil }
        switch series {
        case .counter(let c): return Double(c.value)
        case .gauge(let g): return g.value
        case .function(let body): return body()
        case .histogram(let h): return Double(h.snapshot.count)
        }
    }

    /// The sum of every counter or gauge series of a family (0 when it has none): a worker's
    /// progress line adds its stage's series up.
    public func total(_ name: String) -> Double {
        let series = store.withLock { $0[name].map { Array($0.series.values) } ?? [] }
        return series.reduce(0) { sum, series in
            switch series {
            case .counter(let c): sum + Double(c.value)
            case .gauge(let g): sum + g.value
            case .function(let body): sum + body()
            case .histogram: sum
            }
        }
    }

    /// Every family at this instant, sorted by name (what the exposition renders).
    func families() -> [Family] {
        store.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }

    private func resolve<T>(_ name: String, help: String, kind: Kind, labels: [(String, String)],
                            make: () -> Series, extract: (Series) -> T?) -> T {
        let key = Self.labelKey(labels)
        return store.withLock { families in
            var family = families[name] ?? Family(name: name, help: help, kind: kind)
            precondition(family.kind == kind, "metric \(name) registered as \(family.kind) and \(kind)")
            if let existing = family.series[key], let handle = extract(existing) { return handle }
            let series = make()
            family.series[key] = series
            families[name] = family
            return extract(series)!
        }
    }

    /// The label set rendered once, sorted by name, values escaped: `{a="x",b="y"}`.
    static func labelKey(_ labels: [(String, String)]) -> String {
        guard !labels.isEmpty else { return "" }
        let body = labels.sorted { $0.0 < $1.0 }
            .map { "\($0.0)=\"\(PrometheusExposition.escapeLabelValue($0.1))\"" }
            .joined(separator: ",")
        return "{" + body + "}"
    }
}
