import Foundation
import Testing

/// `receiptd demo` as a process: the embedded broker, the fake App Store, and ingest, verify, owners and
/// fulfil as separate worker processes (each its own consumer group), fed with signed
/// transactions, server notifications (one in seven with a forged nested transaction),
/// transaction ids looked up through the App Store Server API, StoreKit 1 receipts through
/// verifyReceipt, duplicates, forgeries, malformed records and lifecycle scripts. The demo checks
/// every verdict and every owner's final entitlement state against what the generator knows to be
/// right and exits non-zero on any difference.
@Suite(.timeLimit(.minutes(3))) struct DemoProcessTests {
    @Test func demoAccountsForEverySubmissionWithTheExpectedVerdict() throws {
        let (status, summary, errors) = try CrashRestartTests.runCapturingErrors(["demo", "--submissions", "800", "--seed", "5",
                                                                                  "--timeout", "90", "--metrics-port", "0"])
        #expect(status == 0, "\(summary)\n--- the last lines of its standard error:\n\(errors)")
        #expect(summary.contains("result: PASS"))
        #expect(summary.contains("serverNotification"))
        #expect(summary.contains("transactionId"))
        #expect(summary.contains("appReceipt"))
        #expect(ChaosShortTests.row("purchases granted twice", in: summary) == "0")
        #expect(ChaosShortTests.row("owners with a wrong final state", in: summary) == "0")
        #expect(ChaosShortTests.row("owner keys not expected", in: summary) == "0")
        // The notification loop: every renewal the fake pushed to `receiptd notifications` renewed its owner.
        #expect(ChaosShortTests.row("notification loop: pushed by the fake", in: summary) == "20")
        #expect(ChaosShortTests.row("delivered (200 after Kafka's ack)", in: summary) == "20")
        #expect(ChaosShortTests.row("renewals applied to their owners", in: summary) == "20")
    }

    /// Workers that cannot start (here: a malformed configuration variable they inherit) end the
    /// run at once, each named with its log's last line, instead of a minute of "0 accounted".
    @Test func aWorkerThatCannotStartEndsTheRunWithItsReason() throws {
        let started = ContinuousClock.now
        let (status, _, errors) = try CrashRestartTests.runCapturingErrors(
            ["bench", "pipeline", "--submissions", "100"], environment: ["RECEIPTD_RETRY_TIER_DELAYS_SECONDS": "[10]"])
        let elapsed = ContinuousClock.now - started
        #expect(status == 1)
        // The run stops at the first exit, when the other workers may not have exited yet (on a
        // loaded machine only one is named): each worker named is named with how and why.
        let named = errors.split(separator: "\n").filter { $0.hasPrefix("bench pipeline: worker ") }
        #expect(!named.isEmpty, "\(errors)")
        for line in named {
            let stage = ["ingest", "verify", "fulfil", "owners"].first { line.hasPrefix("bench pipeline: worker \($0)-1 (exit status 1): ") }
            #expect(stage != nil, "\(line)")
            #expect(line.hasSuffix(": error: RECEIPTD_RETRY_TIER_DELAYS_SECONDS must be a comma-separated list of numbers"), "\(line)")
        }
        #expect(errors.contains("only 0 of 100 accounted for; stopped, since a worker exited on its own"), "\(errors)")
        // The bench's stall timeout is 60 s: well before it, the run was stopped by the exits.
        #expect(elapsed < .seconds(45), "took \(elapsed)")
    }
}
