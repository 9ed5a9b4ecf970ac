import Foundation
import Testing
@testable import Pipeline

@Suite struct DelayGateTests {
    let t0 = Fixtures.now
    let p0 = TopicPartition(topic: "receipts.ingested.retry.1", partition: 0)
    let p1 = TopicPartition(topic: "receipts.ingested.retry.1", partition: 1)

    private func record(_ tp: TopicPartition, _ offset: Int64) -> InboundRecord {
        InboundRecord(topic: tp.topic, partition: tp.partition, offset: offset, key: nil, value: [], timestamp: t0)
    }

    @Test func dueRecordsPassAndTheFirstNotDueOneHoldsItsPartition() {
        var gate = DelayGate()
        let noDelay = gate.offer(record(p0, 0), due: nil, now: t0)
        let dueNow = gate.offer(record(p0, 1), due: t0, now: t0)
        let notDue = gate.offer(record(p0, 2), due: t0 + 10, now: t0)
        #expect(noDelay && dueNow && !notDue)
        #expect(gate.partitions == [p0])
        // Records fetched behind the held head queue in offset order, even when due already.
        let behind = gate.offer(record(p0, 3), due: t0 + 5, now: t0)
        let otherPartition = gate.offer(record(p1, 0), due: t0 - 1, now: t0)
        #expect(!behind && otherPartition)
        #expect(gate.nextDue == t0 + 10)
        #expect(gate.count == 2)

        let early = gate.release(now: t0 + 9.999)
        #expect(early.isEmpty)
        let onTime = gate.release(now: t0 + 10)
        #expect(onTime.map(\.offset) == [2, 3])
        #expect(gate.partitions.isEmpty)
        #expect(gate.nextDue == nil)
    }

    @Test func aLaterHeadKeepsTheRestHeldUntilItsOwnDueTime() {
        var gate = DelayGate()
        _ = gate.offer(record(p0, 0), due: t0 + 10, now: t0)
        _ = gate.offer(record(p0, 1), due: t0 + 300, now: t0)  // Retry-After pushed this one later
        _ = gate.offer(record(p0, 2), due: t0 + 10, now: t0)
        let version = gate.version
        let first = gate.release(now: t0 + 10)
        #expect(first.map(\.offset) == [0])
        #expect(gate.version != version)
        #expect(gate.partitions == [p0])
        #expect(gate.nextDue == t0 + 300)
        let rest = gate.release(now: t0 + 300)
        #expect(rest.map(\.offset) == [1, 2])
    }

    @Test func revokedAndStoppedPartitionsDropWhatTheyHold() {
        var gate = DelayGate()
        _ = gate.offer(record(p0, 0), due: t0 + 10, now: t0)
        _ = gate.offer(record(p1, 4), due: t0 + 10, now: t0)
        _ = gate.offer(record(p1, 5), due: t0 + 10, now: t0)
        let dropped = gate.drop([p1])
        #expect(dropped == 2)
        #expect(gate.partitions == [p0])
        let remaining = gate.dropAll()
        #expect(remaining == 1)
        #expect(gate.count == 0)
        let none = gate.release(now: t0 + 3600)
        #expect(none.isEmpty)
    }
}

@Suite struct TieredRetryPolicyTests {
    private let clock: @Sendable () -> Date = { Fixtures.now }

    @Test func eachAttemptGoesToItsTierThenToTheDeadLetterTopic() {
        let policy = TieredRetryPolicy(delays: [.seconds(10), .seconds(60), .seconds(600), .seconds(3600)], clock: clock)
        let error = StageError.transient("app-store-unavailable", "503")
        #expect(policy.decide(attempt: 1, error: error) == .retry(tier: 1, notBefore: Fixtures.now + 10))
        #expect(policy.decide(attempt: 2, error: error) == .retry(tier: 2, notBefore: Fixtures.now + 60))
        #expect(policy.decide(attempt: 3, error: error) == .retry(tier: 3, notBefore: Fixtures.now + 600))
        #expect(policy.decide(attempt: 4, error: error) == .retry(tier: 4, notBefore: Fixtures.now + 3600))
        #expect(policy.decide(attempt: 5, error: error) == .deadLetter)
        #expect(TieredRetryPolicy(delays: [], clock: clock).decide(attempt: 1, error: error) == .deadLetter)
        #expect(NeverRetryPolicy().decide(attempt: 1, error: error) == .deadLetter)
    }

    @Test func retryAfterPushesNotBeforeLaterButNeverEarlier() {
        let policy = TieredRetryPolicy(delays: [.seconds(10)], clock: clock)
        let later = StageError.transient("rate-limited", "429", retryAfter: Fixtures.now + 120)
        #expect(policy.decide(attempt: 1, error: later) == .retry(tier: 1, notBefore: Fixtures.now + 120))
        let sooner = StageError.transient("rate-limited", "429", retryAfter: Fixtures.now + 2)
        #expect(policy.decide(attempt: 1, error: sooner) == .retry(tier: 1, notBefore: Fixtures.now + 10))
    }
}

@Suite struct RetryTopicTests {
    @Test func tierTopicsAreNamedAfterTheInputAndRecognised() {
        let topics = Topics()
        #expect(topics.inputs(of: .verify, retryTiers: 2)
            == ["receipts.ingested", "receipts.ingested.retry.1", "receipts.ingested.retry.2"])
        #expect(topics.retryTier(of: "receipts.ingested.retry.3", stage: .verify) == 3)
        #expect(topics.retryTier(of: "receipts.ingested", stage: .verify) == nil)
        #expect(topics.retryTier(of: "receipts.ingested.retry.0", stage: .verify) == nil)
        #expect(topics.retryTier(of: "receipts.ingested.retry.01", stage: .verify) == nil)
        #expect(topics.retryTier(of: "receipts.ingested.retry.1", stage: .fulfil) == nil)
        let all = topics.allNames(retryTiers: 1)
        #expect(all.count == 12 + StageName.allCases.count)
        #expect(all.contains("receipts.submitted.retry.1") && all.contains("receipts.verified.retry.1"))
        #expect(all.contains("entitlements.owner-updates.retry.1"))
    }
}
