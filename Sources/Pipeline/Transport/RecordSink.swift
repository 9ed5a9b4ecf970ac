/// Where a ``StageRunner`` writes records: an idempotent producer.
public protocol RecordSink: Sendable {
    /// Produces `records` and returns only when every one of them is acknowledged by the broker
    /// (its delivery report arrived). Throws if any of them failed; some may then have been
    /// written (the runner treats the whole batch as not delivered, which is at-least-once).
    func send(_ records: [OutboundRecord]) async throws
}
