import Foundation
import Pipeline
import Testing

/// `receiptd consumption-expiry` as a process on the embedded broker: a request nobody answered
/// past its deadline gets one `expired` outcome; an answered one and one still in time get none;
/// a second run changes nothing.
@Suite(.timeLimit(.minutes(2))) struct ConsumptionExpiryTests {
    @Test func anUnansweredRequestExpiresOnceAndNothingElseDoes() async throws {
        let broker = try BrokerFixture()
        let topics = broker.topics
        let longAgo = Date().addingTimeInterval(-2 * 86_400)
        func request(_ id: String, at date: Date) -> ConsumptionRequest {
            ConsumptionRequest(requestId: id, bundleId: "com.example.game", userId: "user-1", transactionId: "tx-\(id)",
                               originalTransactionId: "otx-\(id)", productId: "com.demo.coins.100", environment: "Production",
                               requestedAt: date)
        }
        let requests = [request("silent", at: longAgo), request("answered", at: longAgo), request("in-time", at: Date())]
        try await broker.publish(topics.consumptionRequests,
                                 try requests.map { ($0.originalTransactionId, try ContractCoding.encode($0)) })
        let answered = ConsumptionOutcome(requestId: "answered", transactionId: "tx-answered", outcome: .answered, reason: nil,
                                          appleStatus: 202, at: longAgo.addingTimeInterval(3600))
        try await broker.publish(topics.consumptionOutcomes, [(answered.recordKey, try ContractCoding.encode(answered))])

        let overlay = FileManager.default.temporaryDirectory.appendingPathComponent("expiry-\(UUID().uuidString).json")
        try #"{"topics": {"partitions": \#(BrokerFixture.partitions)}}"#.write(to: overlay, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: overlay) }
        let arguments = ["consumption-expiry", "--config", "Config/receiptd.json", "--config", overlay.path,
                         "--brokers", broker.bootstrap[0]]

        let dry = try CrashRestartTests.runToCompletion(arguments + ["--dry-run"])
        #expect(dry.status == 0 && dry.output.contains("1 would expire"), "\(dry.output)")
        let first = try CrashRestartTests.runToCompletion(arguments)
        #expect(first.status == 0 && first.output.contains("1 expired"), "\(first.output)")
        let second = try CrashRestartTests.runToCompletion(arguments)
        #expect(second.status == 0 && second.output.contains("0 expired"), "\(second.output)")

        let reader = try broker.reader([topics.consumptionOutcomes])
        try await reader.waitUntilCaughtUp([topics.consumptionOutcomes])
        let outcomes = try reader.messages(in: topics.consumptionOutcomes).map {
            try ContractCoding.decode(ConsumptionOutcome.self, from: $0.value)
        }
        await reader.close()
        #expect(outcomes.count == 2)
        let expired = outcomes.filter { $0.outcome == .expired }
        #expect(expired.map(\.requestId) == ["silent"] && expired.first?.reason == ConsumptionExpiry.notAnswered)
    }
}
