import Foundation
import Kafka
import Observability
import Pipeline
import Synchronization
import Testing

/// `receiptd replay`'s logic on the embedded broker: real dead letters (a fulfil worker whose
/// ledger was not ready), filters, a dry run that moves nothing, and two replays through a running
/// fulfil worker that grant once.
@Suite(.timeLimit(.minutes(3))) struct ReplayIntegrationTests {
    /// A sink that counts the records it forwards.
    private final class CountingSink: RecordSink {
        let inner: KafkaRecordSink
        let sent = Mutex(0)

        init(_ inner: KafkaRecordSink) { self.inner = inner }

        func send(_ records: [OutboundRecord]) async throws {
            sent.withLock { $0 += records.count }
            try await inner.send(records)
        }
    }

    @Test func deadLettersAreFilteredDryRunAndReplayedTwiceIntoOneGrantEach() async throws {
        let broker = try BrokerFixture()
        let samples = try Samples()
        let total = 6
        let originals = try (0..<total).map { try samples.verified(990_000 + $0) }
        try await broker.publish(broker.topics.verified, originals)
        let reader = try broker.reader([broker.topics.entitlementsChanged, broker.topics.outcomes, broker.topics.deadLetter,
                                        broker.topics.verified])
        // The Kafka-backed ledger, not wired in as the runner's assignment hook: until the test
        // prepares its partitions, every record finds its state not ready (transient, no retry
        // tiers here: dead-lettered as `ledger-unavailable`).
        let ledger = broker.purchaseLedger()
        let fulfil = try broker.runner(FulfilStage(catalogue: try BrokerFixture.catalogue(), ledger: ledger),
                                                       group: "replay-fulfil")
        let producer = CountingSink(try KafkaRecordSink(configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrap)))
        let replay = { (options: DeadLetterReplayer.Options) in try await Self.replay(broker, producer, options) }
        let inputs = Set(StageName.allCases.map(broker.topics.input(of:)))
        let entitlements = { reader.messages(in: broker.topics.entitlementsChanged) }
        let duplicates = {
            reader.messages(in: broker.topics.outcomes).filter { $0.json["outcome"] as? String == "duplicate-suppressed" }
        }

        let running = Task { try await fulfil.run() }
        try await reader.wait { $0.filter { $0.topic == broker.topics.deadLetter }.count >= total }
        #expect(entitlements().isEmpty)

        // Filters that match nothing, then a dry run: nothing is published.
        let (wrongReason, _) = try await replay(.init(filter: ReplayFilter(reasons: ["timeout"]), allowedTopics: inputs))
        #expect(wrongReason.scanned == total && wrongReason.matched == 0)
        let (wrongBundle, _) = try await replay(.init(filter: ReplayFilter(bundleId: "com.other.app"), allowedTopics: inputs))
        #expect(wrongBundle.matched == 0)
        let (dryRun, lines) = try await replay(.init(filter: ReplayFilter(reasons: ["ledger-unavailable"]), dryRun: true,
                                                     allowedTopics: inputs))
        #expect(dryRun.replayed == total && lines.count == total)
        #expect(lines.allSatisfy { $0.contains("topic=receipts.verified reason=ledger-unavailable attempt=1 submission=s-99") })
        #expect(producer.sent.withLock { $0 } == 0)

        // The ledger is back: the first replay grants, the second is suppressed as duplicates.
        try await ledger.prepare((0..<BrokerFixture.partitions).map {
            TopicPartition(topic: broker.topics.verified, partition: Int32($0))
        }, epoch: AssignmentEpoch(1))
        let (first, _) = try await replay(.init(filter: ReplayFilter(reasons: ["ledger-unavailable"]), replayId: "first",
                                                allowedTopics: inputs))
        #expect(first.replayed == total)
        try await reader.wait { _ in entitlements().count >= total }
        let (second, _) = try await replay(.init(replayId: "second", allowedTopics: inputs))
        #expect(second.replayed == total)  // the first replay wrote no new dead letters
        try await reader.wait { _ in duplicates().count >= total }
        fulfil.shutdownGracefully()
        try await running.value
        await producer.inner.close()

        #expect(entitlements().count == total)
        #expect(Set(entitlements().compactMap { $0.json["transactionId"] as? String }).count == total)
        #expect(duplicates().count == total)
        #expect(reader.messages(in: broker.topics.deadLetter).count == total)
        // Replayed records: same key and value, same partition as the original, fresh headers.
        let verified = reader.messages(in: broker.topics.verified)
        let replayed = verified.filter { $0.header(RecordHeaders.replayedAt) != nil }
        #expect(replayed.count == 2 * total)
        #expect(Set(replayed.compactMap { $0.header(RecordHeaders.replayId) }) == ["first", "second"])
        for record in replayed {
            let original = try #require(verified.first { $0.key == record.key && $0.header(RecordHeaders.replayedAt) == nil })
            #expect(record.value == original.value)
            #expect(record.partition == original.partition)
            #expect(record.header(RecordHeaders.attempt) == nil)
            #expect(!record.headers.contains { $0.key.hasPrefix("receiptd-") && $0.key != RecordHeaders.replayedAt
                && $0.key != RecordHeaders.replayId })
        }
        await reader.close()
    }

    /// One replay run over its own reader (a reader serves one run); returns the summary and
    /// the dry-run listing.
    private static func replay(_ broker: BrokerFixture, _ sink: CountingSink,
                               _ options: DeadLetterReplayer.Options) async throws -> (ReplaySummary, [String]) {
        let reader = KafkaDeadLetterReader(bootstrapServers: broker.bootstrap, topic: broker.topics.deadLetter,
                                           idleTimeout: .seconds(10))
        var lines: [String] = []
        let summary = try await DeadLetterReplayer(reader: reader, sink: sink).run(options, listing: { lines.append($0) })
        return (summary, lines)
    }
}
