/// Where a ``StageRunner`` writes records: an idempotent producer.
public protocol RecordSink: Sendable {
    /// Produces `records` and returns only when every one of them is acknowledged by the broker
    /// (its delivery report arrived). Throws if any of them failed; some may then have been
    /// written (the runner treats the whole batch as not delivered, which is at-least-once).
    func send(_ records: [OutboundRecord]) async throws

    /// Gives up on records sent but not yet on their way to the broker, of every partition: their
    /// sends fail and they are never written. The runner calls it when it fences revoked
    /// partitions (a lost assignment, a revocation past its timeout), so that nothing it queued
    /// lands after their next owner rebuilt its state; with the eager rebalancing its Kafka
    /// workers use, a revocation takes every partition, so no record still allowed to write
    /// loses its outputs.
    func discardUnsent() async
}

extension RecordSink {
    /// Nothing is queued outside the call (in-memory sinks write at once).
    public func discardUnsent() async {}
}
