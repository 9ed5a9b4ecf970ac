import Observability

/// A worker's periodic account at info level, read from its own metrics: records in, outputs,
/// rejections, lag and rate since the last line, and, while it is not ready, what it waits for
/// (a restarted worker waiting for its group, a broker that went away) instead of only
/// librdkafka's own lines.
struct WorkerReporter: Sendable {
    let stage: String
    let registry: MetricsRegistry
    let readiness: @Sendable () -> Readiness
    let interval: Duration
    let logger: Logger

    /// Reports until cancelled.
    func run() async {
        var previousIn = 0.0
        var lastReason: String?
        var elapsed = Duration.zero
        let tick = min(interval, .seconds(5))
        while !Task.isCancelled {
            do { try await Task.sleep(for: tick) } catch { return }
            elapsed += tick
            let state = readiness()
            if !state.isReady, state.reason != lastReason || elapsed >= interval {
                logger.notice("not ready: waiting", metadata: ["ready.reason": .string(state.reason)])
            } else if state.isReady, lastReason != nil, state.reason != lastReason {
                logger.notice("ready", metadata: ["ready.reason": .string(state.reason)])
            }
            lastReason = state.reason
            guard elapsed >= interval else { continue }
            let recordsIn = registry.total("receiptd_stage_input_records_total")
            let seconds = elapsed / .seconds(1)
            logger.info("progress", metadata: [
                LoggingKeys.stageName: .string(stage),
                "records.in": .integer(Int64(recordsIn)),
                "records.out": .integer(Int64(registry.total("receiptd_stage_output_records_total"))),
                "records.rejected": .integer(Int64(registry.total("receiptd_rejections_total"))),
                "records.retried": .integer(Int64(registry.total("receiptd_retries_total"))),
                "records.dead_lettered": .integer(Int64(registry.total("receiptd_dead_letters_total"))),
                "kafka.lag": .integer(Int64(registry.total("receiptd_kafka_consumer_lag_messages"))),
                "records.per_second": .double((recordsIn - previousIn) / seconds),
            ])
            previousIn = recordsIn
            elapsed = .zero
        }
    }
}
