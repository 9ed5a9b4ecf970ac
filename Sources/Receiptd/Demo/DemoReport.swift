import Foundation

/// The demo's closing summary: what was submitted, what became of it, whether every verdict
/// matched what the generator knew to be right, and whether every owner ended where it must.
struct DemoReport {
    let result: PipelineRun.Result
    let expectations: [String: SubmissionExpectation]
    /// Submissions per kind (`malformed` for records ingest must refuse outright).
    var kinds: [String: Int] = [:]
    /// Lifecycle scripts in the stream.
    var scripts = 0

    /// Submissions whose verdict differs from the expectation (or that were never accounted for).
    var mismatches: [(String, String, String)] {
        var out: [(String, String, String)] = []
        for (id, expectation) in expectations {
            let verdict = result.counts.verdicts[id] ?? "(none)"
            if !expectation.accepts(verdict, anyOrder: false) { out.append((id, expectation.verdict, verdict)) }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// Purchases granted twice to one owner without a revoke or expire in between.
    var doubleGrants: Int { result.counts.doubleGrants.count }

    var passed: Bool {
        result.complete && mismatches.isEmpty && doubleGrants == 0 && result.owners?.passed ?? false
            && result.loop?.passed ?? true
    }

    func render() -> String {
        let c = result.counts
        let seconds = result.elapsed / .seconds(1)
        var lines: [String] = []
        func row(_ label: String, _ value: Any) {
            lines.append("  " + label.padding(toLength: 40, withPad: " ", startingAt: 0) + "\(value)")
        }
        lines.append("")
        lines.append("receiptd demo summary")
        lines.append("  " + String(repeating: "-", count: 50))
        row("submitted", result.submitted)
        for (kind, n) in kinds.sorted(by: { $0.value > $1.value }) { row("    " + kind, n) }
        row("lifecycle scripts", scripts)
        row("accounted for", c.accounted.count)
        row("verified -> entitlement changes", c.entitlementsByAction.values.reduce(0, +))
        for (action, n) in c.entitlementsByAction.sorted(by: { $0.key < $1.key }) { row("    " + action, n) }
        row("rejected", c.rejectedByReason.values.reduce(0, +))
        for (reason, n) in c.rejectedByReason.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
            row("    " + reason, n)
        }
        row("duplicates suppressed", c.outcomes["duplicate-suppressed", default: 0])
        for (outcome, n) in c.outcomes.sorted(by: { $0.key < $1.key }) where outcome != "duplicate-suppressed" { row("    outcome " + outcome, n) }
        row("dead-lettered", c.deadLetters)
        for (reason, n) in c.deadLettersByReason.sorted(by: { $0.key < $1.key }) { row("    " + reason, n) }
        row("purchases granted twice", doubleGrants)
        row("verdicts differing from expected", mismatches.count)
        if let owners = result.owners {
            row("owners checked", owners.checked)
            row("owners with a wrong final state", owners.wrong.count)
            row("owner keys not expected", owners.unexpected.count)
        } else {
            row("owners checked", "not checked")
        }
        row("elapsed", String(format: "%.1f s", seconds))
        row("throughput", String(format: "%.0f submissions/s", Double(c.accounted.count) / max(seconds, 0.001)))
        row("workers stopped cleanly (SIGTERM)", "\(result.cleanWorkerExits)/\(result.workers)")
        for worker in result.exitedWorkers { lines.append("  ! worker exited on its own, run stopped: \(worker)") }
        for (id, expected, got) in mismatches.prefix(10) { lines.append("  ! \(id): expected \(expected), got \(got)") }
        for key in c.doubleGrants.sorted().prefix(10) { lines.append("  ! granted twice: \(key)") }
        lines += OwnerStateCheck.describe(result.owners)
        if let loop = result.loop {
            row("notification loop: pushed by the fake", loop.pushed)
            row("    delivered (200 after Kafka's ack)", loop.delivered)
            row("    renewals applied to their owners", loop.renewalsApplied)
            row("    receiver stopped cleanly (SIGTERM)", loop.receiverStoppedCleanly ? "yes" : "no")
            for problem in loop.problems.prefix(10) { lines.append("  ! notification loop: \(problem)") }
        }
        lines.append("  " + String(repeating: "-", count: 50))
        lines.append(passed ? "  result: PASS (every submission accounted for, as expected; every owner as expected)" : "  result: FAIL")
        return lines.joined(separator: "\n")
    }
}

extension OwnerStateCheck {
    /// Up to 10 wrong owner states (expected vs actual) and 10 unexpected keys, for a report.
    static func describe(_ result: Result?) -> [String] {
        guard let result else { return [] }
        var lines: [String] = []
        for mismatch in result.wrong.prefix(10) {
            lines.append("  ! owner \(mismatch.key)")
            lines.append("      expected \(mismatch.expected)")
            lines.append("      actual   \(mismatch.actual)")
        }
        for key in result.unexpected.prefix(10) { lines.append("  ! owner key not expected: \(key)") }
        return lines
    }
}
