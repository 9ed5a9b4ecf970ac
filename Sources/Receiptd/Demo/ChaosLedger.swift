import FakeAppStore
import Foundation
import Pipeline

/// What a chaos run did and what became of every submission.
struct ChaosLedger {
    var expectations: [String: SubmissionExpectation] = [:]
    /// Where the lost submissions got to (``LostSubmissionTrace``), for the first few.
    var lostTrace: [String: [String]] = [:]
    /// The final-owner-state check.
    var owners: OwnerStateCheck.Result?
    var kills = 0
    var brokerFaults = 0
    var appStoreOutages = 0
    var replay: ReplaySummary?
    var elapsed: Duration = .zero
    var retentionViolations: [String] = []
    /// Workers found not running at the end without having been killed then (they exited on their own).
    var exitedOnTheirOwn: [String] = []
    var counts = OutcomeTally.Counts()
    var appStore: FakeAppStoreStatistics?
    /// The surviving workers' in-flight peaks (killed incarnations leave no report).
    var backpressure: [BackpressureReport] = []

    /// Submissions without any verdict.
    func lost(submissions: Int) -> Int { submissions - counts.accounted.count }

    /// The submissions with no verdict, sorted.
    var lostIds: [String] { expectations.keys.filter { !counts.accounted.contains($0) }.sorted() }
    /// Entitlement events seen more than once (the same transaction's change emitted twice).
    var duplicated: Int { counts.eventPositions.values.filter { $0.count > 1 }.count }
    /// Submissions whose final verdict is still a dead letter.
    var stillDeadLettered: [String: Int] {
        var out: [String: Int] = [:]
        for verdict in counts.verdicts.values where verdict.hasPrefix("dead-letter:") {
            out[String(verdict.dropFirst("dead-letter:".count)), default: 0] += 1
        }
        return out
    }

    /// Purchases granted to one owner again without a revoke or expire in between (a consumable's
    /// units granted twice included).
    var doubleGrants: Int { counts.doubleGrants.count }
    /// Submissions whose verdict contradicts what the generator knew: a forgery granted, a genuine
    /// purchase rejected, a rejection with the wrong reason. Dead letters and lost submissions are
    /// counted by their own rows.
    var wrongVerdicts: [(id: String, expected: String, got: String)] {
        expectations.compactMap { id, expectation in
            guard let verdict = counts.verdicts[id], !verdict.hasPrefix("dead-letter:"),
                  !expectation.accepts(verdict, anyOrder: true) else { return nil }
            return (id, expectation.verdict, verdict)
        }.sorted { $0.id < $1.id }
    }

    func passed(submissions: Int) -> Bool {
        lost(submissions: submissions) == 0 && duplicated == 0 && doubleGrants == 0 && wrongVerdicts.isEmpty
            && retentionViolations.isEmpty && exitedOnTheirOwn.isEmpty && owners?.passed ?? false
            && overBound.isEmpty
    }

    /// Workers whose peak in flight passed their `runner.maxInFlight` (the runner admits no more).
    var overBound: [String] {
        backpressure.filter { $0.peakInFlight > $0.maxInFlight }.map(\.worker)
    }

    func render(submissions: Int) -> String {
        var lines = ["", "receiptd chaos ledger", "  " + String(repeating: "-", count: 60)]
        func row(_ label: String, _ value: Any) {
            lines.append("  " + label.padding(toLength: 44, withPad: " ", startingAt: 0) + "\(value)")
        }
        let seconds = elapsed / .seconds(1)
        row("submissions", submissions)
        row("worker SIGKILLs (restarted)", kills)
        row("broker faults (down/up, request errors)", brokerFaults)
        row("App Store outages (every answer 5xx)", appStoreOutages)
        if let appStore {
            row("App Store faults injected", "21005 \(appStore.status21005), 5xx \(appStore.serverErrors), 429 \(appStore.rateLimited), "
                + "dropped \(appStore.dropped) of \(appStore.requests) requests")
        }
        row("dead letters replayed", replay?.replayed ?? 0)
        // One verdict per submission (records re-emitted after a kill are counted once).
        var verdicts: [String: Int] = [:]
        for verdict in counts.verdicts.values where !verdict.hasPrefix("dead-letter:") { verdicts[verdict, default: 0] += 1 }
        row("submissions with a verdict", counts.verdicts.count)
        for (verdict, n) in verdicts.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
            row("    " + verdict, n)
        }
        row("entitlement-changed records", counts.entitlementsByAction.values.reduce(0, +))
        row("duplicate-suppressed outcomes (records)", counts.outcomes["duplicate-suppressed", default: 0])
        row("still dead-lettered", stillDeadLettered.values.reduce(0, +))
        for (reason, n) in stillDeadLettered.sorted(by: { $0.key < $1.key }) { row("    " + reason, n) }
        row("LOST (no verdict)", lost(submissions: submissions))
        for id in lostIds.prefix(5) {
            lines.append("    ! \(id): expected \(expectations[id].map { "\($0)" } ?? "?")")
            for place in lostTrace[id] ?? [] { lines.append("        \(place)") }
        }
        row("DUPLICATED (event emitted twice)", duplicated)
        for (eventId, positions) in counts.eventPositions.filter({ $0.value.count > 1 }).sorted(by: { $0.key < $1.key }).prefix(5) {
            lines.append("    ! \(eventId) at \(positions.joined(separator: ", "))")
        }
        row("same message written twice by the broker", counts.brokerRewrites.values.reduce(0) { $0 + $1.count })
        for (eventId, positions) in counts.brokerRewrites.sorted(by: { $0.key < $1.key }).prefix(5) {
            lines.append("    \(eventId) first at \(counts.eventPositions[eventId]?.first ?? "?"), again at \(positions.joined(separator: ", "))")
        }
        row("DOUBLE GRANTS (purchase granted twice)", doubleGrants)
        for key in counts.doubleGrants.sorted().prefix(5) { lines.append("    ! \(key)") }
        let wrong = wrongVerdicts
        row("WRONG VERDICTS (vs the generator)", wrong.count)
        for (id, expected, got) in wrong.prefix(5) { lines.append("    ! \(id): expected \(expected), got \(got)") }
        row("owners checked", owners.map { "\($0.checked)" } ?? "not checked")
        row("WRONG FINAL OWNER STATES", owners.map { "\($0.wrong.count)" } ?? "-")
        row("owner keys not expected", owners.map { "\($0.unexpected.count)" } ?? "-")
        lines += OwnerStateCheck.describe(owners)
        row("retention dropped unread or state records", retentionViolations.count)
        row("workers that exited on their own", exitedOnTheirOwn.isEmpty ? "0" : exitedOnTheirOwn.joined(separator: ", "))
        row("records re-read by the tally (ignored)", counts.rereads)
        if let bound = backpressure.first?.maxInFlight {
            // The runner pauses at the bound; records handed over after that wait for room.
            let peaks = backpressure.map { "\($0.worker) \($0.peakInFlight)" }.joined(separator: ", ")
            row("peak records in flight (bound \(bound))", peaks)
            row("WORKERS OVER THE BOUND", overBound.isEmpty ? "0" : overBound.joined(separator: ", "))
            row("backpressure pauses", backpressure.map(\.pauses).reduce(0, +))
        }
        for violation in retentionViolations.prefix(5) { lines.append("    ! " + violation) }
        row("elapsed", String(format: "%.1f s", seconds))
        lines.append("  " + String(repeating: "-", count: 60))
        lines.append(passed(submissions: submissions) ? "  result: PASS (0 lost, 0 duplicated, 0 double grants, 0 wrong verdicts, 0 wrong owners)" : "  result: FAIL")
        return lines.joined(separator: "\n")
    }
}
