import Foundation
import Kafka
import Observability
import Pipeline
import Testing

/// Two fulfil runners in one consumer group share the partitions through a rebalance: every
/// verified transaction ends as an entitlement change, none is lost, and whatever is processed
/// twice around the hand-over carries the same event id.
@Suite(.timeLimit(.minutes(3))) struct RebalanceTests {
    @Test func twoConsumersOfOneGroupShareThePartitions() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let total = 3000
        try await broker.publish(broker.topics.verified, (0..<total).map { try samples.verified(100_000 + $0) })
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter, broker.topics.rejected])

        let metricsA = MetricsRegistry(), metricsB = MetricsRegistry()
        let catalogue = try BrokerFixture.catalogue()
        let (a, sourceA, sinkA) = try broker.runner(FulfilStage(catalogue: catalogue, ledger: InMemoryFulfilmentLedger()),
                                                    group: "rebalance", metrics: metricsA, maxInFlight: 16)
        let (b, sourceB, sinkB) = try broker.runner(FulfilStage(catalogue: catalogue, ledger: InMemoryFulfilmentLedger()),
                                                    group: "rebalance", metrics: metricsB, maxInFlight: 16)
        let emitted: @Sendable (MetricsRegistry) -> Int64 = {
            $0.counter("receiptd_stage_records_total", labels: [("stage", "fulfil"), ("outcome", "emitted")])
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await a.run() }
            // Let A own every partition and make progress, then B joins: the group rebalances.
            try await reader.wait { $0.count >= 300 }
            group.addTask { try await b.run() }
            try await reader.wait(timeout: .seconds(90)) { messages in
                Set(messages.compactMap { $0.json["transactionId"] as? String }).count >= total
            }
            a.shutdownGracefully(); b.shutdownGracefully()
            try await group.waitForAll()
        }
        for source in [sourceA, sourceB] { await source.close() }
        for sink in [sinkA, sinkB] { await sink.close() }

        let entitlements = reader.messages(in: broker.topics.entitlementsChanged)
        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        #expect(reader.messages(in: broker.topics.rejected).isEmpty)
        var idsByTransaction: [String: Set<String>] = [:]
        for message in entitlements {
            let json = message.json
            idsByTransaction[json["transactionId"] as! String, default: []].insert(json["eventId"] as! String)
        }
        #expect(idsByTransaction.count == total)
        #expect(idsByTransaction.values.allSatisfy { $0.count == 1 }, "a re-emission carried a different event id")
        #expect(emitted(metricsA) > 0)
        #expect(emitted(metricsB) > 0, "the second consumer never received a partition")
        await reader.close()
    }
}
