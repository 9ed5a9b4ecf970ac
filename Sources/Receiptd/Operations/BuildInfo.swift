import Foundation
import Kafka
import Observability

/// What `receiptd_build_info` and `receiptd_process_start_time_seconds` say about this process.
enum BuildInfo {
    /// The receiptd release (bumped with each tagged release).
    static let version = "0.10.0"

    /// Registers the build-info and start-time series for this process.
    static func register(in registry: MetricsRegistry, role: String) {
        registry.function("receiptd_build_info", help: "Always 1; the labels say which build and role this process runs.",
                          kind: .gauge, labels: [("version", version), ("role", role),
                                                 ("librdkafka", KafkaLibrary.version),
                                                 ("allocator", Allocator.name ?? "unknown")]) { 1 }
        let started = Date().timeIntervalSince1970
        registry.function("receiptd_process_start_time_seconds", help: "When this process started (Unix time).",
                          kind: .gauge) { started }
    }
}
