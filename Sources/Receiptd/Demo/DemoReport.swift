import Foundation

/// The demo's closing summary: what was submitted, what became of it, and whether every verdict
/// matched what the generator knew to be right.
struct DemoReport {
    let result: PipelineRun.Result
    let expectations: [String: SubmissionGenerator.Expectation]
    /// Submissions per kind (`malformed` for records ingest must refuse outright).
    var kinds: [String: Int] = [:]

    /// Submissions whose verdict differs from the expectation (or that were never accounted for).
    var mismatches: [(String, String, String)] {
        var out: [(String, String, String)] = []
        for (id, expectation) in expectations {
            let verdict = result.counts.verdicts[id] ?? "(none)"
            if !expectation.accepts(verdict, anyOrder: false) { out.append((id, expectation.verdict, verdict)) }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// Transactions granted (or renewed) more than once.
    var doubleGrants: Int { result.counts.grantsPerTransaction.values.filter { $0 > 1 }.count }

    var passed: Bool { result.complete && mismatches.isEmpty && doubleGrants == 0 }

    func render() -> String {
        let c = result.counts
        let seconds = Double(result.elapsed.components.seconds) + Double(result.elapsed.components.attoseconds) / 1e18
        var lines: [String] = []
        func row(_ label: String, _ value: Any) {
            lines.append("  " + label.padding(toLength: 34, withPad: " ", startingAt: 0) + "\(value)")
        }
        lines.append("")
        lines.append("receiptd demo summary")
        lines.append("  " + String(repeating: "-", count: 50))
        row("submitted", result.submitted)
        for (kind, n) in kinds.sorted(by: { $0.value > $1.value }) { row("    " + kind, n) }
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
        row("transactions granted twice", doubleGrants)
        row("verdicts differing from expected", mismatches.count)
        row("elapsed", String(format: "%.1f s", seconds))
        row("throughput", String(format: "%.0f submissions/s", Double(c.accounted.count) / max(seconds, 0.001)))
        row("workers stopped cleanly (SIGTERM)", "\(result.cleanWorkerExits)/\(result.workers)")
        for (id, expected, got) in mismatches.prefix(10) { lines.append("  ! \(id): expected \(expected), got \(got)") }
        lines.append("  " + String(repeating: "-", count: 50))
        lines.append(passed ? "  result: PASS (every submission accounted for, as expected)" : "  result: FAIL")
        return lines.joined(separator: "\n")
    }
}
