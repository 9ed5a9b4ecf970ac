import Foundation
import Kafka
import Observability
import Pipeline
import Testing

/// Two fulfil runners with the Kafka ledger in one consumer group share the partitions through
/// rebalances (B joins while A owns everything; later A leaves), with re-submissions of
/// transactions the *other* runner emitted arriving after each move: every verified transaction
/// ends as exactly one entitlement change, in its input's partition number.
@Suite(.timeLimit(.minutes(3))) struct RebalanceTests {
    @Test func twoConsumersOfOneGroupEmitEveryTransactionExactlyOnce() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.deadLetter, broker.topics.rejected,
                                        broker.topics.outcomes, broker.topics.verified])
        let metricsA = MetricsRegistry(), metricsB = MetricsRegistry()
        let a = try broker.fulfilRunner(group: "rebalance", metrics: metricsA, maxInFlight: 16)
        let emitted: @Sendable (MetricsRegistry) -> Int64 = {
            Int64($0.value("receiptd_stage_records_total", labels: [("stage", "fulfil"), ("outcome", "emitted")]) ?? 0)
        }
        let judged = { reader.messages(in: broker.topics.entitlementsChanged).count + reader.messages(in: broker.topics.outcomes).count }
        let changed = { Set(reader.messages(in: broker.topics.entitlementsChanged).compactMap { $0.json["transactionId"] as? String }) }
        var published = 0
        /// Publishes new transactions `range` plus re-submissions of every 7th earlier one, then
        /// waits until each input record has a verdict: every new transaction an entitlement change,
        /// and as many verdicts as inputs. The count alone is not enough: an input delivered again
        /// after a rebalance (its offset not committed in time) adds an outcome, which would let the
        /// wait end, and the runner be shut down, with another input not yet processed.
        func batch(_ range: Range<Int>) async throws {
            var records = try range.map { try samples.verified(100_000 + $0) }
            records += try stride(from: 0, to: range.lowerBound, by: 7).map { try samples.verified(100_000 + $0) }
            try await broker.publish(broker.topics.verified, records)
            published += records.count
            let expected = published, newTransactions = Set((0..<range.upperBound).map { String(100_000 + $0) })
            do {
                try await reader.wait(timeout: .seconds(90)) { _ in judged() >= expected && newTransactions.isSubset(of: changed()) }
            } catch {
                // Which input records never got a verdict (a record skipped, e.g. lost across a rebalance)?
                var verdicts: [String: Int] = [:]
                for message in reader.messages(in: broker.topics.entitlementsChanged) + reader.messages(in: broker.topics.outcomes) {
                    verdicts[message.json["transactionId"] as! String, default: 0] += 1
                }
                var inputs: [String: [String]] = [:]
                for message in reader.messages(in: broker.topics.verified) {
                    let transactionId = (message.json["transaction"] as! [String: Any])["transactionId"] as! String
                    inputs[transactionId, default: []].append("\(message.partition)@\(message.offset)")
                }
                let missing = inputs.filter { verdicts[$0.key, default: 0] < $0.value.count }
                Issue.record("""
                    no verdict for: \(missing.map { "\($0.key) at \($0.value)" }.sorted().prefix(10)); \
                    without an entitlement change: \(Self.missing(from: changed(), reader: reader, topics: broker.topics))
                    """)
                throw error
            }
        }

        let total = 3000
        let runningA = Task { try await a.run() }
        try await batch(0..<1000)
        // B joins (its consumer joins the group when created): the group rebalances, and B
        // rebuilds the ledgers of the partitions it gets from what A emitted.
        let b = try broker.fulfilRunner(group: "rebalance", metrics: metricsB, maxInFlight: 16)
        let runningB = Task { try await b.run() }
        try await reader.wait(timeout: .seconds(60)) { _ in !b.source.kafkaConsumer.assignment.isEmpty }
        try await batch(1000..<2000)
        // A leaves the group: its partitions move to B, which rebuilds their ledgers.
        a.shutdownGracefully()
        try await runningA.value
        try await reader.wait(timeout: .seconds(60)) { _ in b.source.kafkaConsumer.assignment.count == BrokerFixture.partitions }
        try await batch(2000..<total)
        b.shutdownGracefully()
        try await runningB.value
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
        #expect(counts.count == total, "\(Self.missing(from: Set(counts.keys), reader: reader, topics: broker.topics))")
        let repeated = counts.filter { $0.value > 1 }.count
        #expect(repeated == 0, "\(repeated) transactions were emitted more than once")
        #expect(emitted(metricsA) > 0)
        #expect(emitted(metricsB) > 0, "the second consumer never received a partition")
        await reader.close()
    }

    /// How many transactions have no entitlement change, and the first ten, each with its input
    /// records' positions and the outcomes recorded for its submissions: what a failure needs.
    static func missing(from changed: Set<String>, reader: TopicReader, topics: Topics) -> String {
        var inputs: [String: [String]] = [:], submissions: [String: String] = [:]
        for message in reader.messages(in: topics.verified) {
            let transactionId = (message.json["transaction"] as! [String: Any])["transactionId"] as! String
            guard !changed.contains(transactionId) else { continue }
            inputs[transactionId, default: []].append("\(message.partition)@\(message.offset)")
            submissions[message.json["submissionId"] as? String ?? ""] = transactionId
        }
        var outcomes: [String: [String]] = [:]
        for message in reader.messages(in: topics.outcomes) {
            guard let transactionId = submissions[message.json["submissionId"] as? String ?? ""] else { continue }
            outcomes[transactionId, default: []].append(
                "\(message.json["outcome"] as? String ?? "?") at \(message.partition)@\(message.offset)")
        }
        return "\(inputs.count), the first: " + inputs.keys.sorted().prefix(10)
            .map { "\($0): inputs \(inputs[$0]!), outcomes \(outcomes[$0] ?? [])" }.joined(separator: "; ")
    }
}
