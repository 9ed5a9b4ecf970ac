import Foundation
import HTTP
import Observability
import Pipeline
import Synchronization
import Testing
@testable import Receiptd

/// The receiver's HTTP contract without a broker: 200 only after the sink acknowledged, 503 when
/// it failed, 400 with a reason and nothing sent for a malformed body, and no payload in the logs.
@Suite struct NotificationEndpointTests {
    static let claims = #"{"notificationType":"DID_RENEW","notificationUUID":"u-1","data":{"bundleId":"com.example.game"}}"#
    static func b64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    static let signedPayload = b64(#"{"alg":"ES256"}"#) + "." + b64(claims) + "." + b64(String(repeating: "s", count: 64))
    static let body = Array(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)

    let transport = InMemoryTransport(partitions: ["receipts.submitted": 4])
    let logs = InMemoryLogHandler()

    var endpoint: NotificationEndpoint {
        NotificationEndpoint(notificationPath: "/appstore/notifications", healthPath: "/health", metricsPath: "/metrics",
                             intake: NotificationIntake(), sink: transport.sink, topic: "receipts.submitted",
                             logger: Logger(label: "test", level: .trace, handler: logs), metrics: MetricsRegistry())
    }

    static func post(_ body: [UInt8], path: String = "/appstore/notifications") -> HTTPServerRequest {
        HTTPServerRequest(method: .post, path: path, body: body)
    }

    @Test func answers200OnlyAfterTheBrokerAcknowledged() async throws {
        transport.holdAcknowledgements()
        let answered = Mutex<HTTPServerResponse?>(nil)
        let endpoint = self.endpoint
        let request = Task { let response = await endpoint.handle(Self.post(Self.body)); answered.withLock { $0 = response } }
        #expect(await transport.waitUntil { $0.heldSendCount == 1 })
        // The record is written but unacknowledged: the handler is still waiting on the sink.
        #expect(transport.records(in: "receipts.submitted").count == 1)
        #expect(answered.withLock { $0 } == nil)
        transport.releaseAcknowledgements()
        await request.value
        let response = try #require(answered.withLock { $0 })
        #expect(response.status == 200)
        let record = try #require(transport.records(in: "receipts.submitted").first)
        #expect(record.key.map { String(decoding: $0, as: UTF8.self) } == "com.example.game/" + SHA256.hexDigest(Self.signedPayload))
    }

    @Test func answers503WhenTheBrokerCannotTakeIt() async throws {
        struct Down: Error {}
        transport.setSendFailure { _ in Down() }
        let response = await endpoint.handle(Self.post(Self.body))
        #expect(response.status == 503)
        #expect(String(decoding: response.body, as: UTF8.self).contains("broker-unavailable"))
        #expect(transport.records(in: "receipts.submitted").isEmpty)
    }

    @Test func malformedBodyGets400WithItsReasonAndNothingIsSent() async throws {
        let response = await endpoint.handle(Self.post(Array(#"{"signedPayload":"only.two"}"#.utf8)))
        #expect(response.status == 400)
        let problem = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(problem["error"] == "malformed-jws")
        #expect(transport.sendCount == 0)
        #expect(transport.records(in: "receipts.submitted").isEmpty)
    }

    @Test func otherMethodsAndPathsAreRefused() async {
        #expect(await endpoint.handle(HTTPServerRequest(method: .get, path: "/appstore/notifications")).status == 405)
        #expect(await endpoint.handle(Self.post(Self.body, path: "/elsewhere")).status == 404)
        #expect(await endpoint.handle(HTTPServerRequest(method: .get, path: "/health")).status == 200)
        #expect(transport.sendCount == 0)
    }

    @Test func metricsCountOutcomesAndLogsNeverHoldThePayload() async throws {
        let endpoint = self.endpoint
        _ = await endpoint.handle(Self.post(Self.body))
        _ = await endpoint.handle(Self.post(Array("{}".utf8)))
        let metrics = String(decoding: await endpoint.handle(HTTPServerRequest(method: .get, path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains(#"receiptd_notifications_total{outcome="published",reason=""} 1"#))
        #expect(metrics.contains(#"receiptd_notifications_total{outcome="rejected",reason="missing-signed-payload"} 1"#))
        #expect(logs.records.count == 2)
        for record in logs.records {
            #expect(!"\(record.message) \(record.metadata)".contains(Self.signedPayload))
        }
    }
}
