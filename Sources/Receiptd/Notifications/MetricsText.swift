import Foundation
import Observability

/// The Prometheus text exposition of a ``MetricsRegistry`` (counters, and summaries as
/// `_count`/`_sum`), for the `/metrics` endpoint of a process that serves HTTP.
enum MetricsText {
    static func render(_ registry: MetricsRegistry) -> String {
        let (counters, summaries) = registry.snapshot()
        var lines: [String] = []
        for (key, value) in counters.sorted(by: { $0.key.description < $1.key.description }) {
            lines.append("\(series(key.name, key)) \(value)")
        }
        for (key, summary) in summaries.sorted(by: { $0.key.description < $1.key.description }) {
            lines.append("\(series(key.name + "_count", key)) \(summary.count)")
            lines.append("\(series(key.name + "_sum", key)) \(summary.sum)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func series(_ name: String, _ key: MetricsRegistry.Key) -> String {
        guard !key.labels.isEmpty else { return name }
        let labels = key.labels.map { label in
            let escaped = label.value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n")
            return "\(label.name)=\"\(escaped)\""
        }
        return name + "{" + labels.joined(separator: ",") + "}"
    }
}
