import Foundation
import HTTP
import Kafka
import Observability
import Testing
@testable import Receiptd

/// `/metrics`, `/healthz` and `/readyz` as a worker answers them, and the readiness rules
/// (``WorkerReadiness``) over librdkafka statistics shaped as librdkafka 2.0.2 emits them.
@Suite struct OperationsEndpointTests {
    private static func statistics(joinState: String, assignment: Int, brokerState: String = "UP",
                                   coordinatorState: String = "UP") -> KafkaStatistics {
        let json = """
        {"name":"rdkafka#consumer-1","type":"consumer","replyq":0,"msg_cnt":0,
         "brokers":{"127.0.0.1:9092/bootstrap":{"state":"INIT","nodeid":-1,"source":"configured"},
                    "127.0.0.1:40001/1":{"state":"\(brokerState)","nodeid":1,"source":"learned","waitresp_cnt":1,
                                          "outbuf_cnt":0,"rtt":{"avg":1500}},
                    "GroupCoordinator":{"state":"\(coordinatorState)","nodeid":1,"source":"logical"}},
         "topics":{"receipts.verified":{"partitions":{
            "0":{"fetch_state":"active","consumer_lag":3,"fetchq_cnt":2,"hi_offset":10,"lo_offset":0},
            "1":{"fetch_state":"active","consumer_lag":-1,"hi_offset":4,"lo_offset":1},
            "-1":{"fetch_state":"none","consumer_lag":-1}}}},
         "cgrp":{"state":"up","join_state":"\(joinState)","rebalance_cnt":2,"assignment_size":\(assignment)}}
        """
        return KafkaStatistics.decode(Array(json.utf8))!
    }

    private static func get(_ path: String, _ registry: MetricsRegistry = MetricsRegistry(),
                            readiness: Readiness = .ready("fine")) -> (Int, String) {
        let response = OperationsServer.respond(to: HTTPServerRequest(method: .get, path: path), registry: registry,
                                                readiness: { readiness })
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test func pathsAnswerWithTheirContent() {
        let registry = MetricsRegistry()
        registry.counter("receiptd_x_total", help: "x.").increment()
        let (metricsStatus, metrics) = Self.get("/metrics", registry)
        #expect(metricsStatus == 200)
        #expect(metrics.contains("# TYPE receiptd_x_total counter\nreceiptd_x_total 1\n"))
        #expect(Self.get("/healthz", readiness: .notReady("broker down")) == (200, "ok\n"))
        #expect(Self.get("/readyz", readiness: .notReady("broker down")) == (503, "not ready: broker down\n"))
        #expect(Self.get("/readyz") == (200, "ready: fine\n"))
        #expect(Self.get("/nope").0 == 404)
        let post = OperationsServer.respond(to: HTTPServerRequest(method: .post, path: "/metrics"), registry: registry,
                                            readiness: { .ready("") })
        #expect(post.status == 405)
    }

    @Test func readinessFollowsBrokerGroupAndPreparation() {
        let readiness = WorkerReadiness(group: "receiptd-fulfil", bootstrap: "127.0.0.1:9092", statisticsInterval: .seconds(10))
        #expect(readiness.evaluate() == .notReady("starting: no librdkafka statistics yet from the brokers at 127.0.0.1:9092 "
                                                  + "(the first come one observability.statisticsIntervalSeconds after start)"))
        readiness.update(Self.statistics(joinState: "steady", assignment: 2, brokerState: "DOWN", coordinatorState: "DOWN"))
        #expect(readiness.evaluate() == .notReady("broker unreachable: no connection to 127.0.0.1:9092 is up"))
        // Before its first assignment a member talks only to the group coordinator: reachable.
        readiness.update(Self.statistics(joinState: "wait-join", assignment: 0, brokerState: "INIT"))
        #expect(readiness.evaluate() == .notReady("waiting for consumer group receiptd-fulfil to assign partitions (join state wait-join)"))
        readiness.update(Self.statistics(joinState: "wait-join", assignment: 0))
        #expect(readiness.evaluate() == .notReady("waiting for consumer group receiptd-fulfil to assign partitions (join state wait-join)"))
        readiness.update(Self.statistics(joinState: "steady", assignment: 2))
        let preparing = Preparing(2)
        readiness.track(preparing: { preparing.count })
        #expect(readiness.evaluate() == .notReady("rebuilding the state of 2 assigned partition(s)"))
        preparing.count = 0
        #expect(readiness.evaluate() == .ready("member of receiptd-fulfil with 2 partition(s)"))
        readiness.update(Self.statistics(joinState: "steady", assignment: 0))
        #expect(readiness.evaluate().isReady)
        #expect(readiness.evaluate().reason.contains("idle by design"))
        readiness.stopping()
        #expect(readiness.evaluate() == .notReady("shutting down"))
    }

    @Test func statisticsBecomeLagAndBrokerGauges() {
        let registry = MetricsRegistry()
        let metrics = KafkaStatisticsMetrics(registry: registry)
        metrics.update(Self.statistics(joinState: "steady", assignment: 2))
        #expect(registry.value("receiptd_kafka_consumer_lag_messages", labels: [("topic", "receipts.verified"), ("partition", "0")]) == 3)
        // No committed offset yet: everything retained counts.
        #expect(registry.value("receiptd_kafka_consumer_lag_messages", labels: [("topic", "receipts.verified"), ("partition", "1")]) == 3)
        #expect(registry.value("receiptd_kafka_consumer_lag_messages", labels: [("topic", "receipts.verified"), ("partition", "-1")]) == nil)
        #expect(registry.value("receiptd_kafka_brokers_up") == 1)
        #expect(registry.value("receiptd_kafka_broker_rtt_seconds", labels: [("broker", "127.0.0.1:40001/1")]) == 0.0015)
        #expect(registry.value("receiptd_kafka_broker_rtt_seconds", labels: [("broker", "GroupCoordinator")]) == nil)
        #expect(registry.value("receiptd_kafka_rebalances_total") == 2)
        #expect(registry.value("receiptd_kafka_fetch_queue_messages") == 2)
        // A revoked partition's lag series goes away with it.
        let json = #"{"type":"consumer","brokers":{},"topics":{"receipts.verified":{"partitions":{"0":{"fetch_state":"active","consumer_lag":1}}}}}"#
        metrics.update(KafkaStatistics.decode(Array(json.utf8))!)
        #expect(registry.value("receiptd_kafka_consumer_lag_messages", labels: [("topic", "receipts.verified"), ("partition", "1")]) == nil)
        #expect(registry.value("receiptd_kafka_broker_rtt_seconds", labels: [("broker", "127.0.0.1:40001/1")]) == nil)
    }
}

/// A partition count the test changes while readiness reads it.
private final class Preparing: @unchecked Sendable {
    // @unchecked: written and read from the one test task.
    var count: Int
    init(_ count: Int) { self.count = count }
}
