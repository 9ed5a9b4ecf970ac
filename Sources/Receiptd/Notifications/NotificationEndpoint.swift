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

    /// Answers one request; never throws, whatever the body.
    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        switch request.path {
        case notificationPath:
            guard request.method == .post else { return HTTPServerResponse(status: 405, headers: ["Allow": "POST"]) }
            return await receive(request.body)
        case healthPath:
            return .json(Array(#"{"status":"ok"}"#.utf8))
        case metricsPath:
            return .text(MetricsText.render(metrics))
        default:
            return .text("not found", status: 404)
        }
    }

    private func receive(_ body: [UInt8]) async -> HTTPServerResponse {
        switch intake.accept(body, receivedAt: clock()) {
        case .failure(let error):
            metrics.increment(Self.requestsMetric, labels: [("outcome", "rejected"), ("reason", error.code.rawValue)])
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
                metrics.increment(Self.requestsMetric, labels: [("outcome", "unavailable")])
                metadata[LoggingKeys.errorMessage] = .string(String(describing: error).prefix(512).description)
                logger.error("notification not acknowledged by Kafka; answering 503 so Apple retries", metadata: metadata)
                return Self.problem(503, reason: "broker-unavailable", detail: "the notification could not be stored; retry later")
            }
            metrics.increment(Self.requestsMetric, labels: [("outcome", "published")])
            logger.info("notification published", metadata: metadata)
            return .json(Array(#"{"status":"published"}"#.utf8))
        }
    }

    static let requestsMetric = "receiptd_notifications_total"

    /// A JSON problem body: `{"error": reason, "detail": …}`.
    static func problem(_ status: Int, reason: String, detail: String) -> HTTPServerResponse {
        let object = ["error": reason, "detail": detail]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)).map { Array($0) } ?? []
        return .json(body, status: status)
    }
}
