import Foundation
import Observability

/// What a stage may know about the record it is processing besides its value.
///
/// Deliberately no topic, offset or header: stages stay transport-agnostic and testable as
/// functions. The clock is a value (``now``) fixed when the attempt starts, so a stage's output is
/// deterministic for a given context.
public struct StageContext: Sendable {
    /// A logger already carrying the record's metadata (stage, partition, offset). Log ids and
    /// hashes only, never payloads.
    public var logger: Logger
    /// 1 for the first attempt, incremented by each retry tier.
    public var attempt: Int
    /// "Now" for this attempt (injectable through the runner's clock).
    public var now: Date
    /// When the record was produced (its Kafka timestamp), for provenance.
    public var recordTimestamp: Date?
    /// The fate of this attempt's outputs, for collaborators whose changes must count only once
    /// the outputs are acknowledged (a ledger claim). Set by the runner; nil when a stage is
    /// called directly (tests), where such changes take effect at once.
    public var delivery: DeliveryScope?

    /// Creates a context; tests usually pass only `now`.
    public init(logger: Logger = .disabled, attempt: Int = 1, now: Date, recordTimestamp: Date? = nil,
                delivery: DeliveryScope? = nil) {
        self.logger = logger
        self.attempt = attempt
        self.now = now
        self.recordTimestamp = recordTimestamp
        self.delivery = delivery
    }
}
