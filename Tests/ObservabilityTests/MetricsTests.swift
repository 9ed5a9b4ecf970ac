import Observability
import Testing

@Suite struct MetricsTests {
    @Test func handlesResolveOncePerLabelSetInAnyLabelOrder() {
        let metrics = MetricsRegistry()
        let a = metrics.counter("records_total", help: "h", labels: [("stage", "verify"), ("outcome", "emitted")])
        let b = metrics.counter("records_total", help: "h", labels: [("outcome", "emitted"), ("stage", "verify")])
        a.increment()
        b.increment(by: 2)
        metrics.counter("records_total", help: "h", labels: [("stage", "verify"), ("outcome", "rejected")]).increment()
        #expect(a === b)
        #expect(metrics.value("records_total", labels: [("stage", "verify"), ("outcome", "emitted")]) == 3)
        #expect(metrics.value("records_total", labels: [("outcome", "rejected"), ("stage", "verify")]) == 1)
        #expect(metrics.value("records_total", labels: [("stage", "fulfil")]) == nil)
    }

    @Test func rendersTheTextFormatWithCumulativeBuckets() {
        let metrics = MetricsRegistry()
        metrics.counter("jobs_total", help: "Jobs done.", labels: [("reason", "a\"b\\c\nd")]).increment(by: 4)
        let latency = metrics.histogram("job_seconds", help: "Job latency.", labels: [("stage", "x")], buckets: [0.1, 1])
        latency.observe(0.0625)
        latency.observe(0.5)
        latency.observe(0.5)
        latency.observe(7)
        metrics.gauge("in_flight", help: "In flight.").set(2.5)
        metrics.function("paused_total", help: "Pauses.", kind: .counter) { 3 }
        let text = PrometheusExposition.render(metrics)
        #expect(text == """
        # HELP in_flight In flight.
        # TYPE in_flight gauge
        in_flight 2.5
        # HELP job_seconds Job latency.
        # TYPE job_seconds histogram
        job_seconds_bucket{stage="x",le="0.1"} 1
        job_seconds_bucket{stage="x",le="1"} 3
        job_seconds_bucket{stage="x",le="+Inf"} 4
        job_seconds_sum{stage="x"} 8.0625
        job_seconds_count{stage="x"} 4
        # HELP jobs_total Jobs done.
        # TYPE jobs_total counter
        jobs_total{reason="a\\"b\\\\c\\nd"} 4
        # HELP paused_total Pauses.
        # TYPE paused_total counter
        paused_total 3

        """)
    }

    @Test func aBatchOfObservationsCountsAsEachOneAlone() {
        let values = [0.0625, 0.1, 0.5, 7, 0.25, 1]
        let one = MetricsRegistry(), batch = MetricsRegistry()
        let single = one.histogram("job_seconds", help: "h", buckets: [0.1, 1])
        for value in values { single.observe(value) }
        let batched = batch.histogram("job_seconds", help: "h", buckets: [0.1, 1])
        batched.observe(Array(values[..<4]))
        batched.observe([])
        batched.observe(Array(values[4...]))
        #expect(batched.snapshot == single.snapshot)
        #expect(batched.snapshot.buckets == [2, 3, 1])
        #expect(PrometheusExposition.render(batch) == PrometheusExposition.render(one))
    }

    @Test func removedSeriesDisappearAndEmptyFamiliesAreNotRendered() {
        let metrics = MetricsRegistry()
        metrics.gauge("lag", help: "Lag.", labels: [("partition", "0")]).set(5)
        #expect(PrometheusExposition.render(metrics).contains("lag{partition=\"0\"} 5"))
        metrics.remove("lag", labels: [("partition", "0")])
        #expect(PrometheusExposition.render(metrics) == "")
    }
}
