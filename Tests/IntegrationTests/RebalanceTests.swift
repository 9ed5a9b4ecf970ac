import Foundation
import Kafka
import Observability
import Pipeline
import Testing

/// Two fulfil runners with the Kafka ledger in one consumer group share the partitions through
/// rebalances (B joins while A owns everything; later A leaves): every verified transaction ends
/// as exactly one entitlement change, however the partitions moved.
@Suite(.timeLimit(.minutes(3))) struct RebalanceTests {
    @Test func twoConsumersOfOneGroupEmitEveryTransactionExactlyOnce() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let total = 3000
        var records = try (0..<total).map { try samples.verified(100_000 + $0) }
        records += try (0..<200).map { try samples.verified(100_000 + $0 * 7) }  // re-submissions
        try await broker.publish(broker.topics.verified, records)
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter, broker.topics.rejected,
                                        broker.topics.outcomes, broker.topics.verified])

        let metricsA = MetricsRegistry(), metricsB = MetricsRegistry()
        let (a, sourceA, sinkA) = try broker.fulfilRunner(group: "rebalance", metrics: metricsA, maxInFlight: 16)
        let (b, sourceB, sinkB) = try broker.fulfilRunner(group: "rebalance", metrics: metricsB, maxInFlight: 16)
        let emitted: @Sendable (MetricsRegistry) -> Int64 = {
            $0.counter("receiptd_stage_records_total", labels: [("stage", "fulfil"), ("outcome", "emitted")])
        }
        let judged = { reader.messages(in: broker.topics.entitlementsChanged).count + reader.messages(in: broker.topics.outcomes).count }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await a.run() }
            // Let A own every partition and make progress, then B joins: the group rebalances.
            try await reader.wait { _ in judged() >= 300 }
            group.addTask { try await b.run() }
            try await reader.wait(timeout: .seconds(90)) { _ in emitted(metricsB) > 0 && judged() >= 1500 }
            // A leaves: its partitions move to B, which rebuilds their ledgers from what A emitted.
            a.shutdownGracefully()
            try await reader.wait(timeout: .seconds(90)) { messages in
                Set(messages.compactMap { $0.json["transactionId"] as? String }).count >= total
            }
            b.shutdownGracefully()
            try await group.waitForAll()
        }
        for source in [sourceA, sourceB] { await source.close() }
        for sink in [sinkA, sinkB] { await sink.close() }
        try await reader.waitUntilCaughtUp([broker.topics.entitlementsChanged, broker.topics.verified])

        #expect(reader.messages(in: broker.topics.deadLetter).isEmpty)
        #expect(reader.messages(in: broker.topics.rejected).isEmpty)
        var inputPartition: [String: Int32] = [:]
        for message in reader.messages(in: broker.topics.verified) {
            let transaction = message.json["transaction"] as! [String: Any]
            inputPartition[transaction["transactionId"] as! String] = message.partition
        }
        var counts: [String: Int] = [:]
        var misplaced = 0
        for message in reader.messages(in: broker.topics.entitlementsChanged) {
            let transactionId = message.json["transactionId"] as! String
            counts[transactionId, default: 0] += 1
            // Co-partitioned: the change sits in the partition number its input record had.
            if inputPartition[transactionId] != message.partition { misplaced += 1 }
        }
        #expect(misplaced == 0)
        #expect(counts.count == total)
        let repeated = counts.filter { $0.value > 1 }.count
        #expect(repeated == 0, "\(repeated) transactions were emitted more than once")
        #expect(emitted(metricsA) > 0)
        #expect(emitted(metricsB) > 0, "the second consumer never received a partition")
        await reader.close()
    }
}
