import Foundation

/// Which dead letters `receiptd replay` moves. Every criterion that is set must hold; an empty
/// filter matches everything.
public struct ReplayFilter: Sendable, Equatable {
    /// Reason codes to accept (`--reason`, repeatable); empty accepts any.
    public var reasons: Set<ReasonCode>
    /// Only records whose value's `bundleId` is this (`--bundle-id`).
    public var bundleId: String?
    /// Only records that last failed at or after this instant (`--since`, on
    /// `receiptd-last-failed-at`, else the record timestamp).
    public var since: Date?
    /// Only records that last failed before this instant (`--until`, exclusive).
    public var until: Date?
    /// Only this partition of the dead-letter topic (`--partition`).
    public var partition: Int32?
    /// First offset to read, inclusive (`--from-offset`; per partition).
    public var fromOffset: Int64?
    /// Last offset to read, inclusive (`--to-offset`; per partition).
    public var toOffset: Int64?

    /// Creates a filter; every criterion defaults to "any".
    public init(reasons: Set<ReasonCode> = [], bundleId: String? = nil, since: Date? = nil, until: Date? = nil,
                partition: Int32? = nil, fromOffset: Int64? = nil, toOffset: Int64? = nil) {
        self.reasons = reasons
        self.bundleId = bundleId
        self.since = since
        self.until = until
        self.partition = partition
        self.fromOffset = fromOffset
        self.toOffset = toOffset
    }

    /// Checks the criteria are consistent.
    /// - Throws: ``PipelineConfigurationError`` naming the option at fault.
    public func validate() throws {
        if let partition, partition < 0 {
            throw PipelineConfigurationError("--partition must not be negative, got \(partition)")
        }
        if let fromOffset, fromOffset < 0 {
            throw PipelineConfigurationError("--from-offset must not be negative, got \(fromOffset)")
        }
        if let toOffset, toOffset < 0 { throw PipelineConfigurationError("--to-offset must not be negative, got \(toOffset)") }
        if let fromOffset, let toOffset, fromOffset > toOffset {
            throw PipelineConfigurationError("--from-offset (\(fromOffset)) is after --to-offset (\(toOffset))")
        }
        if let since, let until, since >= until {
            throw PipelineConfigurationError("--since must be before --until")
        }
    }

    /// Whether a dead letter passes every criterion.
    public func matches(_ letter: DeadLetter) -> Bool {
        let record = letter.record
        if let partition, record.partition != partition { return false }
        if let fromOffset, record.offset < fromOffset { return false }
        if let toOffset, record.offset > toOffset { return false }
        if !reasons.isEmpty, !(letter.reason.map(reasons.contains) ?? false) { return false }
        if let bundleId, letter.bundleId != bundleId { return false }
        if let since, letter.failedAt < since { return false }
        if let until, letter.failedAt >= until { return false }
        return true
    }
}
