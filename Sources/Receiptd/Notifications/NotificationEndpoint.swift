import Foundation
import HTTP
import Observability
import Pipeline

/// The HTTP side of `receiptd notifications`: Apple's POST becomes one `receipt-submitted/v1`
/// record, and Apple hears `200` only once the broker acknowledged it, so a notification is
/// either durable in Kafka or retried by Apple (docs/appstore-edge.md).
///
/// `413` above the size limit is answered by ``HTTPServer`` before this handler runs.
struct NotificationEndpoint: Sendable {
    /// Paths served.
    var notificationPath: String
    var healthPath: String
    var metricsPath: String
    let intake: NotificationIntake
    /// Where the submission goes (`receipts.submitted` through an idempotent producer).
    let sink: any RecordSink
    let topic: String
    let logger: Logger
    let metrics: MetricsRegistry
    var clock: @Sendable () -> Date = Date.init

    init(notificationPath: String, healthPath: String, metricsPath: String, intake: NotificationIntake,
         sink: any RecordSink, topic: String, logger: Logger, metrics: MetricsRegistry,
         clock: @escaping @Sendable () -> Date = Date.init) {
        self.notificationPath = notificationPath
        self.healthPath = healthPath
        self.metricsPath = metricsPath
        self.intake = intake
        self.sink = sink
        self.topic = topic
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
        requests = Self.requestCounters(metrics)
    }

    /// Answers one request; never throws, whatever the body.
    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        switch request.path {
        case notificationPath:
            guard request.method == .post else { return HTTPServerResponse(status: 405, headers: ["Allow": "POST"]) }
            return await receive(request.body)
        case healthPath:
            return .json(Array(#"{"status":"ok"}"#.utf8))
        case metricsPath:
            return HTTPServerResponse(status: 200, headers: ["Content-Type": PrometheusExposition.contentType],
                                      body: Array(PrometheusExposition.render(metrics).utf8))
        default:
            return .text("not found", status: 404)
        }
    }

    private func receive(_ body: [UInt8]) async -> HTTPServerResponse {
        switch intake.accept(body, receivedAt: clock()) {
        case .failure(let error):
            requests[.rejected(error.code.rawValue)].increment()
            logger.warning("notification refused", metadata: [LoggingKeys.reason: .string(error.code.rawValue),
                                                              LoggingKeys.errorMessage: .string(error.detail)])
            return Self.problem(400, reason: error.code.rawValue, detail: error.detail)
        case .success(let accepted):
            var metadata: Logger.Metadata = [LoggingKeys.submissionId: .string(accepted.submissionId),
                                             LoggingKeys.payloadSHA256: .string(accepted.payloadSHA256)]
            if let uuid = accepted.notificationUUID { metadata["appstore.notification_uuid"] = .string(uuid) }
            do {
                try await sink.send([OutboundRecord(topic: topic, key: Array(accepted.key.utf8), value: accepted.value)])
            } catch {
                requests[.unavailable].increment()
                metadata[LoggingKeys.errorMessage] = .string(String(describing: error).prefix(512).description)
                logger.error("notification not acknowledged by Kafka; answering 503 so Apple retries", metadata: metadata)
                return Self.problem(503, reason: "broker-unavailable", detail: "the notification could not be stored; retry later")
            }
            requests[.published].increment()
            logger.info("notification published", metadata: metadata)
            return .json(Array(#"{"status":"published"}"#.utf8))
        }
    }

    static let requestsMetric = "receiptd_notifications_total"

    /// How a notification POST ended (the `outcome` and `reason` labels).
    enum Outcome: Hashable, Sendable {
        case published, unavailable
        case rejected(String)
    }

    /// The request counter by outcome, resolved once per label set.
    let requests: LabelledCounters<Outcome>

    static func requestCounters(_ registry: MetricsRegistry) -> LabelledCounters<Outcome> {
        LabelledCounters { outcome in
            let labels: [(String, String)] = switch outcome {
            case .published: [("outcome", "published"), ("reason", "")]
            case .unavailable: [("outcome", "unavailable"), ("reason", "broker-unavailable")]
            case .rejected(let reason): [("outcome", "rejected"), ("reason", reason)]
            }
            return registry.counter(requestsMetric, help: "App Store notification POSTs by outcome and reason code.",
                                    labels: labels)
        }
    }

    /// A JSON problem body: `{"error": reason, "detail": …}`.
    static func problem(_ status: Int, reason: String, detail: String) -> HTTPServerResponse {
        let object = ["error": reason, "detail": detail]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)).map { Array($0) } ?? []
        return .json(body, status: status)
    }
}
