import Foundation
import Testing

/// The short form of `receiptd chaos` in the test suite: worker SIGKILLs, the broker down and
/// back, request errors, App Store faults and a 10 s App Store outage, dead letters replayed, and
/// then every submission accounted for with none lost, no entitlement event emitted twice, no
/// purchase granted twice to one owner, no verdict contradicting the generator and every owner's
/// final entitlement state as the generator expected (exit status 0).
@Suite(.timeLimit(.minutes(5))) struct ChaosShortTests {
    @Test func shortChaosRunLosesNothingAndDuplicatesNothing() throws {
        var (status, ledger, errors) = try Self.run(seed: 11)
        if Self.abortedOnMockAssertion(status: status, errorTail: errors) {
            // librdkafka 2.0.2's mock group coordinator aborted the process hosting it, so this run
            // has no verdict (docs/chaos.md, "the mock's assertion"; scripts/mock-member-id-reuse
            // reproduces it). Once more with another seed; a second abort fails the test.
            print("ChaosShortTests: the embedded broker aborted on its known assertion; running again")
            (status, ledger, errors) = try Self.run(seed: 12)
        }
        #expect(status == 0, "\(ledger)\n--- the last lines of its standard error:\n\(errors)")
        #expect(Self.row("LOST (no verdict)", in: ledger) == "0", "\(ledger)")
        #expect(Self.row("DUPLICATED (event emitted twice)", in: ledger) == "0")
        #expect(Self.row("DOUBLE GRANTS (purchase granted twice)", in: ledger) == "0")
        #expect(Self.row("WRONG VERDICTS (vs the generator)", in: ledger) == "0")
        #expect(Self.row("WRONG FINAL OWNER STATES", in: ledger) == "0")
        #expect(Self.row("owner keys not expected", in: ledger) == "0")
        #expect(Self.row("worker SIGKILLs (restarted)", in: ledger) == "4")
        #expect(Self.row("App Store outages (every answer 5xx)", in: ledger) == "1")
        #expect(Self.row("submissions with a verdict", in: ledger) == Self.row("submissions", in: ledger))
        #expect(ledger.contains("result: PASS"))
    }

    /// The assertion librdkafka 2.0.2's mock fails when a member joins with an id it had expired
    /// and given to a newer member (its ids are heap addresses).
    static let mockAssertion = "rd_kafka_mock_cgrp_member_add: Assertion `!member->resp' failed"

    /// Whether a run ended in SIGABRT on that assertion, which no other failure is taken for.
    static func abortedOnMockAssertion(status: Int32, errorTail: String) -> Bool {
        status == SIGABRT && errorTail.contains(mockAssertion)
    }

    /// The abort as `receiptd` prints it (glibc's message, then the backtrace that fills the
    /// tail) is recognised from the tail kept of it; a different assertion, or the right one
    /// with another status, is not.
    @Test func onlyTheMocksOwnAbortIsRunAgain() {
        let backtrace = (1...60).map { "    \($0) [ra] 0x00007f0950979\($0) frame in libFoundation.so" }.joined(separator: "\n")
        let aborted = "receiptd chaos: broker 127.0.0.1:1\nreceiptd: rdkafka_mock_cgrp.c:567: \(Self.mockAssertion).\n"
            + "💣 Program crashed: Aborted at 0x0000000000001e9d\n" + backtrace
        let tail = CrashRestartTests.errorTail(aborted, lines: 40)
        #expect(!tail.contains("Program crashed"), "the tail is the last 40 lines")
        #expect(tail.hasPrefix("receiptd: rdkafka_mock_cgrp.c:567:"), "with the assertion's own line ahead of them")
        #expect(Self.abortedOnMockAssertion(status: SIGABRT, errorTail: tail))
        #expect(!Self.abortedOnMockAssertion(status: 1, errorTail: tail))
        let other = aborted.replacingOccurrences(of: "!member->resp", with: "rkb->rkb_state == UP")
        #expect(!Self.abortedOnMockAssertion(status: SIGABRT, errorTail: CrashRestartTests.errorTail(other, lines: 40)))
        #expect(!Self.abortedOnMockAssertion(status: SIGABRT, errorTail: CrashRestartTests.errorTail(backtrace, lines: 40)))
    }

    static func run(seed: Int) throws -> (status: Int32, output: String, errorTail: String) {
        try CrashRestartTests.runCapturingErrors(["chaos", "--submissions", "3000", "--kills", "4", "--seed", String(seed),
                                                  "--timeout", "60"])
    }

    /// The value of the ledger row `label` (the text after the label's padding), or nil.
    static func row(_ label: String, in ledger: String) -> String? {
        for line in ledger.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix(label) else { continue }
            let rest = trimmed.dropFirst(label.count)
            // Labels are padded with at least two spaces: "submissions" must not match "submissions with …".
            guard rest.hasPrefix("  ") else { continue }
            return rest.trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
