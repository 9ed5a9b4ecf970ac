import Foundation

/// What a replay run did (or, for a dry run, would do).
public struct ReplaySummary: Sendable, Equatable, CustomStringConvertible {
    /// The run's id, written to every replayed record (``RecordHeaders/replayId``).
    public var replayId: String
    /// Whether nothing was published.
    public var dryRun: Bool
    /// Dead letters read.
    public var scanned = 0
    /// Dead letters that passed the filter.
    public var matched = 0
    /// Dead letters republished (for a dry run: that would be).
    public var replayed = 0
    /// Matched, but without `receiptd-original-topic`: left where they are.
    public var skippedNoOriginalTopic = 0
    /// Matched, but naming a topic that is not a stage input: left where they are.
    public var skippedUnknownTopic = 0
    /// Replayed records per destination topic.
    public var byTopic: [String: Int] = [:]
    /// Replayed records per reason code.
    public var byReason: [String: Int] = [:]

    /// Creates an empty summary.
    public init(replayId: String, dryRun: Bool) {
        self.replayId = replayId
        self.dryRun = dryRun
    }

    /// A few lines for people: the counts, then the destinations and reasons.
    public var description: String {
        let verb = dryRun ? "would replay" : "replayed"
        var lines = ["replay \(replayId)\(dryRun ? " (dry run)" : ""): scanned \(scanned), matched \(matched), "
            + "\(verb) \(replayed), skipped \(skippedNoOriginalTopic) without original topic and "
            + "\(skippedUnknownTopic) with an unknown topic"]
        for (topic, count) in byTopic.sorted(by: { $0.key < $1.key }) { lines.append("  to \(topic): \(count)") }
        for (reason, count) in byReason.sorted(by: { $0.key < $1.key }) { lines.append("  reason \(reason): \(count)") }
        return lines.joined(separator: "\n")
    }
}

/// A progress report of a running replay.
public struct ReplayProgress: Sendable, Equatable, CustomStringConvertible {
    /// Offsets covered so far, across the ranges being read.
    public var covered: Int64
    /// Offsets in all ranges.
    public var total: Int64
    /// Counts so far.
    public var summary: ReplaySummary
    /// Seconds since the run started.
    public var elapsed: TimeInterval

    /// Offsets covered per second so far.
    public var rate: Double { elapsed > 0 ? Double(covered) / elapsed : 0 }

    /// Seconds until every range is covered at the current rate (nil before there is a rate).
    public var eta: TimeInterval? {
        if covered >= total { return 0 }
        guard rate > 0 else { return nil }
        return Double(max(0, total - covered)) / rate
    }

    /// `replay: 1200/5000 (24%), matched 300, replayed 300, 150/s, ETA 25s`.
    public var description: String {
        let percent = total > 0 ? Int(Double(covered) * 100 / Double(total)) : 100
        let verb = summary.dryRun ? "would replay" : "replayed"
        return "replay: \(covered)/\(total) (\(percent)%), matched \(summary.matched), \(verb) \(summary.replayed), "
            + "\(Int(rate.rounded()))/s, ETA \(eta.map(Self.format) ?? "?")"
    }

    static func format(_ seconds: TimeInterval) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m\(String(format: "%02d", whole % 60))s" }
        return "\(whole / 3600)h\(String(format: "%02d", whole / 60 % 60))m"
    }
}

/// A replay that stopped part-way (the dead-letter topic could not be read, or publishing
/// failed): what was done until then, and why it stopped. Records published before the failure
/// stay published; running the same replay again republishes them too, which fulfil's
/// de-duplication by event id absorbs.
public struct ReplayError: Error, CustomStringConvertible {
    /// The counts up to the failure.
    public var summary: ReplaySummary
    /// What failed.
    public var underlying: any Error

    public var description: String { "replay stopped: \(underlying)\n\(summary)" }
}
