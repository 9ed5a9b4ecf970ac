/// Where a ``StageRunner`` reads records from: a consumer-group member, reduced to what the
/// runner needs and kept close to Kafka's semantics so the Kafka adapter stays thin.
///
/// Delivery contract:
/// - ``events()`` yields records in offset order per partition; all records of a partition that
///   will ever be delivered precede its ``SourceEvent/revoked(_:)`` event, and should follow its
///   ``SourceEvent/assigned(_:)`` event (the runner holds a record that comes earlier until its
///   partition is assigned and, with a ``PartitionAssignmentHook``, prepared).
/// - Iteration must end (return nil or throw `CancellationError`) when the iterating task is
///   cancelled: that is how the runner stops pulling on shutdown.
/// - Offsets are *stored*, not committed: the adapter runs with `enable.auto.offset.store=false`
///   and auto-commit on, as in swift-kafka-client's at-least-once recipe.
public protocol RecordSource: Sendable {
    /// The event stream's type.
    associatedtype Events: AsyncSequence where Events.Element == SourceEvent

    /// The stream of records and rebalance events. Called once per runner run.
    func events() -> Events

    /// Marks the records at `positions`, and everything before each in its partition, as
    /// processed. One call covers what the runner finished together (one position per partition).
    ///
    /// The runner calls this with non-decreasing positions per partition, never concurrently for
    /// one partition, and only after every output of those records was acknowledged. A Kafka
    /// adapter stores `position.offset + 1` (the next offset to consume), as
    /// `rd_kafka_offsets_store` expects.
    /// - Returns: the partitions whose position was not stored, with why (empty when all were).
    func storeOffsets(_ positions: [RecordPosition]) async -> [TopicPartition: any Error]

    /// Stops fetching from these partitions (backpressure); records already fetched may still
    /// arrive. Pausing an already paused partition is harmless.
    func pause(_ partitions: [TopicPartition]) async throws

    /// Resumes fetching from paused partitions.
    func resume(_ partitions: [TopicPartition]) async throws
}
