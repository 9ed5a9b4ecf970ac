import Foundation

/// Renders a ``MetricsRegistry`` in the Prometheus text exposition format 0.0.4: a `# HELP` and
/// `# TYPE` line per family, counters and gauges as one sample per series, histograms as
/// cumulative `_bucket{le=…}` samples (ending with `+Inf`) plus `_sum` and `_count`.
public enum PrometheusExposition {
    /// The `Content-Type` of the rendered text.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The whole registry as exposition text.
    public static func render(_ registry: MetricsRegistry) -> String {
        var out = ""
        for family in registry.families() where !family.series.isEmpty {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            out += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for (labels, series) in family.series.sorted(by: { $0.key < $1.key }) {
                switch series {
                case .counter(let counter):
                    out += "\(family.name)\(labels) \(counter.value)\n"
                case .gauge(let gauge):
                    out += "\(family.name)\(labels) \(format(gauge.value))\n"
                case .function(let body):
                    out += "\(family.name)\(labels) \(format(body()))\n"
                case .histogram(let histogram):
                    render(histogram, name: family.name, labels: labels, into: &out)
                }
            }
        }
        return out
    }

    private static func render(_ histogram: Histogram, name: String, labels: String, into out: inout String) {
        let snapshot = histogram.snapshot
        // `le` joins the series' own labels: `{stage="verify",le="0.5"}`.
        let prefix = labels.isEmpty ? "{" : String(labels.dropLast()) + ","
        var cumulative: Int64 = 0
        for (index, bound) in histogram.bounds.enumerated() {
            cumulative += snapshot.buckets[index]
            out += "\(name)_bucket\(prefix)le=\"\(format(bound))\"} \(cumulative)\n"
        }
        out += "\(name)_bucket\(prefix)le=\"+Inf\"} \(snapshot.count)\n"
        out += "\(name)_sum\(labels) \(format(snapshot.sum))\n"
        out += "\(name)_count\(labels) \(snapshot.count)\n"
    }

    /// A sample value as Prometheus reads it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Escapes `\`, `"` and line feeds in a label value.
    static func escapeLabelValue(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
        var out = ""
        for ch in value {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }

    /// Escapes `\` and line feeds in a help text.
    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
