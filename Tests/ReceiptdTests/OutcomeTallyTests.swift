import Foundation
import Testing
@testable import Receiptd

/// How the chaos tally tells an event the pipeline emitted twice from one message the embedded
/// broker wrote twice.
struct OutcomeTallyTests {
    let value = Array(#"{"eventId":"e1","action":"grant"}"#.utf8)
    let produced = Date(timeIntervalSince1970: 1_800_000_000.123)

    @Test func aSecondCopyWithTheFirstsTimestampAndBytesIsTheBrokers() {
        var counts = OutcomeTally.Counts()
        let counted1 = counts.recordEvent("e1", at: "t/0/1", timestamp: produced, value: value)
        #expect(counted1)
        let counted2 = counts.recordEvent("e1", at: "t/0/3", timestamp: produced, value: value)
        #expect(!counted2)
        #expect(counts.eventPositions["e1"] == ["t/0/1"])
        #expect(counts.brokerRewrites["e1"] == ["t/0/3"])
    }

    /// A worker emitting the event again produces a new message: a new timestamp, or other bytes.
    @Test func anEmissionOfItsOwnIsADuplicate() {
        var counts = OutcomeTally.Counts()
        let counted3 = counts.recordEvent("e1", at: "t/0/1", timestamp: produced, value: value)
        #expect(counted3)
        let counted4 = counts.recordEvent("e1", at: "t/0/5", timestamp: produced.addingTimeInterval(0.001), value: value)
        #expect(counted4)
        let counted5 = counts.recordEvent("e1", at: "t/0/7", timestamp: produced, value: value + [0x20])
        #expect(counted5)
        #expect(counts.eventPositions["e1"] == ["t/0/1", "t/0/5", "t/0/7"])
        #expect(counts.brokerRewrites.isEmpty)
    }

    /// Without a timestamp to compare, every further copy counts as a duplicate.
    @Test func withoutATimestampEveryCopyCounts() {
        var counts = OutcomeTally.Counts()
        let counted6 = counts.recordEvent("e1", at: "t/0/1", timestamp: nil, value: value)
        #expect(counted6)
        let counted7 = counts.recordEvent("e1", at: "t/0/2", timestamp: nil, value: value)
        #expect(counted7)
        #expect(counts.eventPositions["e1"]?.count == 2)
        #expect(counts.brokerRewrites.isEmpty)
    }

    /// `bench pipeline`'s window ends when the last expected submission is accounted for, not
    /// when a poll notices: the mark is taken by the verdict that reaches the count, once.
    @Test func theCompletionMarkIsTakenByTheVerdictThatReachesTheTarget() throws {
        var counts = OutcomeTally.Counts()
        counts.completionTarget = 2
        counts.settle(submissionId: "s1", source: nil, verdict: "grant")
        counts.noteCompletion()
        #expect(counts.completedAt == nil)
        let before = ContinuousClock.now
        counts.settle(submissionId: "s2", source: nil, verdict: "rejected:invalid-json")
        counts.noteCompletion()
        let mark = try #require(counts.completedAt)
        #expect(mark >= before)
        counts.settle(submissionId: "s3", source: nil, verdict: "grant")
        counts.noteCompletion()
        #expect(counts.completedAt == mark)
    }
}
