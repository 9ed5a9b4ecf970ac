import Observability

/// A stage runner's series, resolved when the runner is built: what it records per record is a
/// few atomic adds and one histogram observation, plus a lookup per topic and code in
/// ``LabelledCounters``. Values the runner's state already holds (in flight, held, pauses) are
/// read at scrape time instead (``registerStateFunctions(_:)``).
///
/// Names and labels are listed in `docs/operations.md`; every label value is a stage name, a
/// configured topic, a tier number or a reason/outcome code, never an id from a record.
final class StageMetrics: Sendable {
    let registry: MetricsRegistry
    let stage: StageName
    private let routes: [RecordRouter.Route: Counter]
    private let duration: Histogram
    private let replayed: Counter
    private let inputs: LabelledCounters<String>
    private let outputs: LabelledCounters<String>
    private let rejections: LabelledCounters<ReasonCode>
    private let deadLetters: LabelledCounters<ReasonCode>
    private let outcomes: LabelledCounters<OutcomeCode>
    private let retries: LabelledCounters<Int>

    init(stage: StageName, registry: MetricsRegistry) {
        self.registry = registry
        self.stage = stage
        let name = stage.rawValue
        var routes: [RecordRouter.Route: Counter] = [:]
        for route in [RecordRouter.Route.emitted, .rejected, .done, .deadLettered, .retried] {
            routes[route] = registry.counter("receiptd_stage_records_total",
                                             help: "Records a stage finished, by how they ended.",
                                             labels: [("stage", name), ("outcome", route.rawValue)])
        }
        self.routes = routes
        duration = registry.histogram("receiptd_stage_duration_seconds",
                                      help: "Time from a record's start to its outputs' acknowledgement.",
                                      labels: [("stage", name)])
        replayed = registry.counter("receiptd_stage_replayed_records_total",
                                    help: "Records finished that receiptd replay had republished from the dead-letter topic.",
                                    labels: [("stage", name)])
        inputs = LabelledCounters { topic in
            registry.counter("receiptd_stage_input_records_total", help: "Records a stage finished, by the topic read.",
                             labels: [("stage", name), ("topic", topic)])
        }
        outputs = LabelledCounters { topic in
            registry.counter("receiptd_stage_output_records_total",
                             help: "Records a stage produced and had acknowledged, by topic.",
                             labels: [("stage", name), ("topic", topic)])
        }
        rejections = LabelledCounters { reason in
            registry.counter("receiptd_rejections_total", help: "Records rejected, by reason code.",
                             labels: [("stage", name), ("reason", reason.rawValue)])
        }
        deadLetters = LabelledCounters { reason in
            registry.counter("receiptd_dead_letters_total", help: "Records sent to the dead-letter topic, by reason code.",
                             labels: [("stage", name), ("reason", reason.rawValue)])
        }
        outcomes = LabelledCounters { outcome in
            registry.counter("receiptd_outcomes_total", help: "Records that ended on purpose without output, by outcome code.",
                             labels: [("stage", name), ("outcome", outcome.rawValue)])
        }
        retries = LabelledCounters { tier in
            registry.counter("receiptd_retries_total", help: "Records sent to a retry tier, by tier.",
                             labels: [("stage", name), ("tier", String(tier))])
        }
    }

    /// What a batch of records whose outputs were acknowledged adds to the series, gathered
    /// without locks and recorded with ``record(_:)`` once per batch: the threads finishing batches
    /// side by side then meet on each series' lock once per batch, not once per record.
    struct Tally {
        fileprivate var routes: [(RecordRouter.Route, Int64)] = []
        fileprivate var durations: [Double] = []
        fileprivate var inputs: [(String, Int64)] = []
        fileprivate var outputs: [(String, Int64)] = []
        fileprivate var verdicts: [RecordVerdict] = []
        fileprivate var replayed: Int64 = 0

        /// A record's outputs were acknowledged.
        mutating func add(_ verdict: RecordVerdict, input item: WorkItem, outbound: [OutboundRecord], elapsed: Duration) {
            // The record's fields are read through the work item: passing the record would copy it.
            Self.count(verdict.route, in: &routes)
            durations.append(elapsed / .seconds(1))
            Self.count(item.record.topic, in: &inputs)
            for record in outbound { Self.count(record.topic, in: &outputs) }
            if case .emitted = verdict {} else { verdicts.append(verdict) }
            let headers = item.record.headers
            if !headers.isEmpty, headers.contains(where: { $0.key == RecordHeaders.replayId }) {
                replayed += 1
            }
        }

        /// A batch holds a handful of distinct topics and routes: a linear scan beats hashing.
        private static func count<Key: Equatable>(_ key: Key, in counts: inout [(Key, Int64)]) {
            if let index = counts.firstIndex(where: { $0.0 == key }) {
                counts[index].1 += 1
            } else {
                counts.append((key, 1))
            }
        }
    }

    /// Records a batch's ``Tally``.
    func record(_ tally: Tally) {
        for (route, count) in tally.routes { routes[route]?.increment(by: count) }
        duration.observe(tally.durations)
        for (topic, count) in tally.inputs { inputs[topic].increment(by: count) }
        for (topic, count) in tally.outputs { outputs[topic].increment(by: count) }
        for verdict in tally.verdicts {
            switch verdict {
            case .emitted: break
            case .rejected(let reason): rejections[reason].increment()
            case .done(let outcome): outcomes[outcome].increment()
            case .retried(let tier, _): retries[tier].increment()
            case .deadLettered(let reason): deadLetters[reason].increment()
            }
        }
        if tally.replayed > 0 { replayed.increment(by: tally.replayed) }
    }

    /// Registers the scrape-time series read from a runner's state.
    func registerStateFunctions<S: Stage>(_ runner: StageRunner<S>) {
        let labels = [("stage", stage.rawValue)]
        registry.function("receiptd_stage_in_flight_records", help: "Records admitted and not yet finished.",
                          kind: .gauge, labels: labels) { [weak runner] in Double(runner?.inFlightCount ?? 0) }
        registry.function("receiptd_stage_backpressure_pauses_total",
                          help: "Times runner.maxInFlight was reached and the partitions were paused.",
                          kind: .counter, labels: labels) { [weak runner] in Double(runner?.backpressureEngagements ?? 0) }
        registry.function("receiptd_stage_held_records", help: "Records held, not in flight: by the delay gate (retry not due), until their partition's state is rebuilt, or for room under runner.maxInFlight.",
                          kind: .gauge, labels: labels + [("gate", "delay")]) { [weak runner] in Double(runner?.heldRecordCount ?? 0) }
        registry.function("receiptd_stage_held_records", help: "Records held, not in flight: by the delay gate (retry not due), until their partition's state is rebuilt, or for room under runner.maxInFlight.",
                          kind: .gauge, labels: labels + [("gate", "readiness")]) { [weak runner] in
            Double(runner?.unpreparedRecordCount ?? 0)
        }
        registry.function("receiptd_stage_held_records", help: "Records held, not in flight: by the delay gate (retry not due), until their partition's state is rebuilt, or for room under runner.maxInFlight.",
                          kind: .gauge, labels: labels + [("gate", "admission")]) { [weak runner] in
            Double(runner?.waitingRecordCount ?? 0)
        }
    }
}
