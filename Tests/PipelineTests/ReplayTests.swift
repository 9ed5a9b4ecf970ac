import Foundation
import Observability
import Synchronization
import Testing
@testable import Pipeline

/// A clock that jumps to each deadline it is asked to sleep until, recording it (rate limits
/// are checked without waiting).
private final class SteppingClock: WallClock {
    private let state = Mutex<(now: Date, sleeps: [Date])>((Fixtures.now, []))

    func now() -> Date { state.withLock { $0.now } }

    func sleep(until deadline: Date) async throws {
        state.withLock { state in
            state.sleeps.append(deadline)
            state.now = max(state.now, deadline)
        }
    }

    var sleeps: [Date] { state.withLock { $0.sleeps } }
}

@Suite(.timeLimit(.minutes(1)))
struct ReplayTests {
    let deadLetter = "receipts.dead-letter"

    /// Produces a dead letter as the runner writes it.
    @discardableResult
    private func produceDeadLetter(_ transport: InMemoryTransport, key: String?, value: [UInt8], reason: String = "timeout",
                                   topic: String? = "receipts.ingested", failedAt: String = "2026-11-30T05:00:00.000Z",
                                   attempt: Int = 5, partition: Int32 = 0) -> RecordPosition {
        var headers = [RecordHeader(key: "trace-id", text: "t-1")]
        if let topic { headers.append(RecordHeader(key: RecordHeaders.originalTopic, text: topic)) }
        headers += [RecordHeader(key: RecordHeaders.originalPartition, text: "3"),
                    RecordHeader(key: RecordHeaders.originalOffset, text: "41"),
                    RecordHeader(key: RecordHeaders.stage, text: "verify"),
                    RecordHeader(key: RecordHeaders.attempt, text: String(attempt)),
                    RecordHeader(key: RecordHeaders.lastFailedAt, text: failedAt),
                    RecordHeader(key: RecordHeaders.reason, text: reason),
                    RecordHeader(key: RecordHeaders.error, text: "boom"),
                    RecordHeader(key: RecordHeaders.appleStatus, text: "503"),
                    RecordHeader(key: RecordHeaders.replayId, text: "an-earlier-replay")]
        return transport.produce(topic: deadLetter, key: key.map { Array($0.utf8) }, value: value, headers: headers,
                                 partition: partition)
    }

    private func submission(_ id: String, bundle: String = "com.example.game") -> [UInt8] {
        Fixtures.submission(["submissionId": id, "bundleId": bundle])
    }

    private func replayer(_ transport: InMemoryTransport, clock: any WallClock = SteppingClock()) -> DeadLetterReplayer {
        DeadLetterReplayer(reader: InMemoryDeadLetterReader(transport: transport), sink: transport.sink, clock: clock)
    }

    private let inputs: Set<String> = ["receipts.submitted", "receipts.ingested", "receipts.verified"]

    @Test func republishesToTheOriginalTopicWithKeyAndValueByteForByteAndFreshHeaders() async throws {
        let transport = InMemoryTransport()
        let key: [UInt8] = [0x00, 0xC3, 0x28, 0xFF]  // not even UTF-8
        let value: [UInt8] = Array("{\"submissionId\":\"s-1\"}".utf8) + [0x0A]
        transport.produce(topic: deadLetter, key: key, value: value,
                          headers: [RecordHeader(key: "trace-id", value: nil),
                                    RecordHeader(key: RecordHeaders.originalTopic, text: "receipts.ingested"),
                                    RecordHeader(key: RecordHeaders.attempt, text: "5"),
                                    RecordHeader(key: RecordHeaders.reason, text: "timeout")])
        let summary = try await replayer(transport).run(.init(replayId: "r-42", allowedTopics: inputs))
        #expect(summary.replayed == 1)
        let replayed = try #require(transport.records(in: "receipts.ingested").first)
        #expect(replayed.key == key)
        #expect(replayed.value == value)
        #expect(replayed.headers == [RecordHeader(key: "trace-id", value: nil),
                                     RecordHeader(key: RecordHeaders.replayedAt, text: "2026-11-30T06:00:00.000Z"),
                                     RecordHeader(key: RecordHeaders.replayId, text: "r-42")])
        #expect(RecordHeaders.attempt(in: replayed.headers) == 1)
        #expect(transport.records(in: deadLetter).count == 1)  // a replay copies; the topic is not changed
    }

    @Test func filtersSelectByReasonBundleTimePartitionAndOffsets() async throws {
        let transport = InMemoryTransport(partitions: [deadLetter: 2])
        produceDeadLetter(transport, key: "a", value: submission("s0"), reason: "timeout")                        // p0@0
        produceDeadLetter(transport, key: "b", value: submission("s1"), reason: "app-store-unavailable")          // p0@1
        produceDeadLetter(transport, key: "c", value: submission("s2", bundle: "com.other.app"), reason: "timeout") // p0@2
        produceDeadLetter(transport, key: "d", value: submission("s3"), reason: "timeout",
                          failedAt: "2026-11-29T05:00:00.000Z")                                                    // p0@3
        produceDeadLetter(transport, key: "e", value: submission("s4"), reason: "timeout", partition: 1)          // p1@0
        produceDeadLetter(transport, key: "f", value: Array("not json".utf8), reason: "undecodable")              // p0@4

        func ids(_ filter: ReplayFilter) async throws -> [String] {
            var lines: [String] = []
            _ = try await replayer(transport).run(.init(filter: filter, dryRun: true, allowedTopics: inputs),
                                                  listing: { lines.append($0) })
            return lines.map { $0.components(separatedBy: "submission=").last ?? "-" }
        }
        #expect(try await ids(ReplayFilter(reasons: ["timeout"])).sorted() == ["s0", "s2", "s3", "s4"])
        #expect(try await ids(ReplayFilter(reasons: ["timeout", "undecodable"])).count == 5)
        #expect(try await ids(ReplayFilter(bundleId: "com.other.app")) == ["s2"])
        #expect(try await ids(ReplayFilter(since: Fixtures.date("2026-11-30T00:00:00Z"), partition: 0)).count == 4)
        #expect(try await ids(ReplayFilter(until: Fixtures.date("2026-11-30T00:00:00Z"))) == ["s3"])
        #expect(try await ids(ReplayFilter(partition: 1)) == ["s4"])
        #expect(try await ids(ReplayFilter(partition: 0, fromOffset: 1, toOffset: 2)) == ["s1", "s2"])
        #expect(throws: PipelineConfigurationError.self) { try ReplayFilter(fromOffset: 3, toOffset: 2).validate() }
        await #expect(throws: ReplayError.self) {
            _ = try await replayer(transport).run(.init(filter: ReplayFilter(partition: 7)))
        }
    }

    @Test func dryRunListsWhatWouldMoveWithoutThePayloadAndPublishesNothing() async throws {
        let transport = InMemoryTransport()
        produceDeadLetter(transport, key: "k", value: submission("s-9"), reason: "app-store-unavailable", attempt: 5)
        produceDeadLetter(transport, key: "k", value: Array("opaque \(Fixtures.jws)".utf8), reason: "undecodable", attempt: 1)
        var lines: [String] = []
        let summary = try await replayer(transport).run(.init(dryRun: true, allowedTopics: inputs), listing: { lines.append($0) })
        #expect(lines == ["0/0 topic=receipts.ingested reason=app-store-unavailable attempt=5 submission=s-9",
                          "0/1 topic=receipts.ingested reason=undecodable attempt=1"])
        #expect(!lines.joined().contains(Fixtures.jws))
        #expect(summary.dryRun && summary.replayed == 2 && summary.matched == 2)
        #expect(transport.records(in: "receipts.ingested").isEmpty)
        #expect(transport.sendCount == 0)
        #expect(summary.description.contains("would replay 2"))
    }

    @Test func recordsWithoutAKnownOriginalTopicStayPut() async throws {
        let transport = InMemoryTransport()
        produceDeadLetter(transport, key: "k", value: submission("s0"), topic: nil)
        produceDeadLetter(transport, key: "k", value: submission("s1"), topic: "somewhere.else")
        produceDeadLetter(transport, key: "k", value: submission("s2"), topic: "receipts.verified")
        let summary = try await replayer(transport).run(.init(allowedTopics: inputs))
        #expect(summary.scanned == 3 && summary.matched == 3 && summary.replayed == 1)
        #expect(summary.skippedNoOriginalTopic == 1 && summary.skippedUnknownTopic == 1)
        #expect(summary.byTopic == ["receipts.verified": 1])
        #expect(transport.records(in: "somewhere.else").isEmpty)
    }

    @Test func theRateLimitSpacesPublishingAndProgressReportsCountsAndETA() async throws {
        let transport = InMemoryTransport()
        for i in 0..<25 { produceDeadLetter(transport, key: "k\(i)", value: submission("s\(i)")) }
        let clock = SteppingClock()
        var reports: [ReplayProgress] = []
        let summary = try await replayer(transport, clock: clock).run(
            .init(rate: 10, allowedTopics: inputs, progressInterval: 0.5), progress: { reports.append($0) })
        #expect(summary.replayed == 25)
        #expect(transport.sendCount == 25)  // rate 10/s: one record per batch
        #expect(clock.sleeps.last == Fixtures.now + 2.4)  // the 25th record, 24/10 s after the start
        #expect(clock.sleeps == clock.sleeps.sorted())
        let last = try #require(reports.last)
        #expect(last.covered == 25 && last.total == 25)
        #expect(last.description.hasPrefix("replay: 25/25 (100%), matched 25, replayed 25"))
        #expect(reports.count >= 3)
        let middle = try #require(reports.dropLast().last)
        #expect(middle.covered < 25 && middle.eta != nil)
        #expect(middle.description.contains("ETA "))
    }

    @Test func replayingTwiceThroughFulfilGrantsOnce() async throws {
        let transport = InMemoryTransport(defaultPartitionCount: 4)
        let verified = Fixtures.verified(Fixtures.transaction(id: "2001", productId: "com.demo.coins.100", type: .consumable,
                                                               expires: nil))
        // Two dead letters of one transaction: a re-submission that failed too.
        for _ in 0..<2 {
            produceDeadLetter(transport, key: "2001", value: try ContractCoding.encode(verified), topic: "receipts.verified")
        }
        let fulfil = StageRunner(stage: FulfilStage(catalogue: Fixtures.catalogue, ledger: KeyedStateStore()),
                                 source: transport.source(group: "fulfil", topics: ["receipts.verified"]),
                                 sink: transport.sink, logger: .disabled, metrics: MetricsRegistry(), clock: { Fixtures.now })
        try await whileRunning(fulfil) {
            for _ in 0..<2 { _ = try await replayer(transport).run(.init(allowedTopics: inputs)) }
            #expect(await transport.waitUntil {
                $0.records(in: "entitlements.changed").count + $0.records(in: "receipts.outcomes").count == 4
            })
        }
        #expect(transport.records(in: "entitlements.changed").count == 1)
        #expect(transport.records(in: "entitlements.owner-updates").count == 1)
        #expect(transport.records(in: "receipts.outcomes").count == 3)
        // Same key, same partition: the replays sit beside each other, where fulfil's ledger sees them in order.
        #expect(Set(transport.records(in: "receipts.verified").map(\.partition)).count == 1)
    }
}
