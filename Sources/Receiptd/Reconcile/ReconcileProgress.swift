import Foundation

/// Progress of a reconciliation on standard error: what is done, the rate, and an ETA from the
/// fraction of the work covered (time span for notifications, purchases for subscriptions).
struct ReconcileProgress {
    let label: String
    let started = ContinuousClock.now
    var lastPrinted: ContinuousClock.Instant?
    var write: (String) -> Void = printError

    /// Prints one line at most every second (and always when `force`).
    /// - Parameters:
    ///   - fraction: how much of the work is covered, 0...1 (nil when unknown).
    mutating func report(_ checkpoint: ReconcileCheckpoint, fraction: Double?, force: Bool = false) {
        let now = ContinuousClock.now
        if !force, let lastPrinted, now - lastPrinted < .seconds(1) { return }
        lastPrinted = now
        let elapsed = (now - started) / .seconds(1)
        var line = "reconcile \(label): pages \(checkpoint.pages), seen \(checkpoint.seen), published \(checkpoint.published), "
            + "skipped \(checkpoint.skipped), failed \(checkpoint.failed), elapsed \(Self.format(elapsed))"
        if let fraction, fraction > 0 {
            let clamped = min(1, fraction)
            line += String(format: ", %.0f%%", clamped * 100)
            if clamped < 1 { line += ", ETA \(Self.format(elapsed / clamped - elapsed))" }
        }
        write(line)
    }

    static func format(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 3600 ? "\(whole / 3600)h\(whole % 3600 / 60)m" : whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
