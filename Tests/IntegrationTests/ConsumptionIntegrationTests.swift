import AppStore
import FakeAppStore
import Foundation
import HTTP
import Kafka
import Pipeline
import Testing

/// A refund consumption request end to end: the fake App Store pushes `CONSUMPTION_REQUEST` to
/// `receiptd notifications`; ingest, verify and fulfil publish it for the purchase's owner; the
/// test answers as a backend would; the consumption runner sends it to the fake over HTTP.
@Suite(.timeLimit(.minutes(3))) struct ConsumptionIntegrationTests {
    @Test func aConsumptionRequestIsAnsweredBeforeItsDeadline() async throws {
        let broker = try BrokerFixture()
        let fake = try NotificationReceiverTests.fakeAppStore()
        defer { fake.stop() }
        let receiver = try ReceiverProcess(brokers: broker.bootstrap[0], overlay: NotificationReceiverTests.overlay,
                                           in: FileManager.default.temporaryDirectory)
        try await receiver.start()
        defer { receiver.stop() }
        fake.setNotificationDelivery(FakeNotificationDelivery(receiverURL: receiver.url, retrySchedule: [.seconds(1)]))
        var coins = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                        purchaseDate: Date().addingTimeInterval(-86_400))
        coins.appAccountToken = UUID().uuidString.lowercased()
        fake.store.add(coins)
        let token = coins.appAccountToken ?? ""
        let events = fake.deliveryEvents()
        let notification = try fake.notify(FakeNotificationRequest(notificationType: "CONSUMPTION_REQUEST", transaction: coins,
                                                                   consumptionRequestReason: "UNINTENDED_PURCHASE"))
        _ = try await NotificationReceiverTests.next(events) { if case .delivered(notification.notificationUUID, _) = $0 { true } else { false } }

        let http = try CurlHTTPClient()
        defer { http.shutdown() }
        var api = fake.serverAPIConfiguration()
        api.requestTimeout = .seconds(30)
        let client = try AppStoreServerAPIClient(configuration: api, signer: fake.configuration.credentials.apiKey, transport: http)
        let consumption = try broker.runner(ConsumptionStage(client: client), group: "consumption",
                                                                                  retryDelays: [.seconds(1)])
        let topics = broker.topics
        let reader = try broker.reader([topics.consumptionRequests, topics.consumptionOutcomes, topics.rejected, topics.deadLetter])
        let pipeline = try NotificationPipeline(broker: broker, fake: fake, consumptionRequests: true)
        try await pipeline.run(alongside: [consumption]) {
            try await reader.wait(timeout: .seconds(90)) { !$0.filter { $0.topic == topics.consumptionRequests }.isEmpty }
            // The backend: it knows the customer and answers the request it read.
            let request = try ContractCoding.decode(ConsumptionRequest.self, from: reader.messages(in: topics.consumptionRequests)[0].value)
            let answer = ConsumptionAnswer(
                requestId: request.requestId, transactionId: request.transactionId, environment: request.environment,
                deadline: request.deadline,
                consumption: ConsumptionInformation(customerConsented: true, consumptionStatus: 3, platform: 1, sampleContentProvided: false,
                                                    deliveryStatus: 0, appAccountToken: token, accountTenure: 2,
                                                    playTime: 3, lifetimeDollarsRefunded: 0, lifetimeDollarsPurchased: 2, userStatus: 1))
            try await broker.publish(topics.consumptionAnswers, [(request.originalTransactionId, try ContractCoding.encode(answer))])
            try await reader.wait(timeout: .seconds(60)) { !$0.filter { $0.topic == topics.consumptionOutcomes }.isEmpty }
        }
        await reader.close()

        let request = try ContractCoding.decode(ConsumptionRequest.self, from: reader.messages(in: topics.consumptionRequests)[0].value)
        #expect(request.requestId == notification.notificationUUID)
        #expect(request.userId == coins.appAccountToken && request.transactionId == coins.transactionId)
        #expect(request.deadline.timeIntervalSince(request.requestedAt) == 12 * 3600)
        let outcome = try ContractCoding.decode(ConsumptionOutcome.self, from: reader.messages(in: topics.consumptionOutcomes)[0].value)
        #expect(outcome.outcome == .answered && outcome.requestId == request.requestId && outcome.appleStatus == 202)
        let report = try #require(fake.consumptionReports.first)
        #expect(fake.consumptionReports.count == 1)
        #expect(report.transactionId == coins.transactionId && report.receivedAt < request.deadline)
        #expect(report.fields["consumptionStatus"] == "3" && report.fields["appAccountToken"] == coins.appAccountToken)
        #expect(reader.messages(in: topics.rejected).isEmpty && reader.messages(in: topics.deadLetter).isEmpty)
    }
}
