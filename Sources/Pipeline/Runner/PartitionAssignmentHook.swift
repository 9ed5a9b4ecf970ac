/// State that must be built for a partition before a ``StageRunner`` may admit its records, and
/// dropped when the partition goes: fulfil's ledger (``KeyedStateStore``), rebuilt from
/// the output partition that mirrors each input partition.
///
/// The runner calls ``prepare(_:epoch:)`` when partitions are assigned and holds their records (not
/// admitted, partitions paused, exactly like the delay gate) until it returns; it calls
/// ``release(_:)`` once revoked partitions have settled (their in-flight records finished or the
/// revocation timeout expired), and for every prepared partition when it stops.
///
/// - Important: calls for one partition never overlap: a ``prepare(_:epoch:)`` that is cancelled
///   (revocation, shutdown) has returned before the runner calls ``release(_:)`` for it. Prepare
///   must rebuild anything it does not hold for a partition *still assigned* from a previous
///   call; the runner never relies on state surviving a release.
public protocol PartitionAssignmentHook: Sendable {
    /// Builds the state of newly assigned partitions.
    /// - Parameters:
    ///   - partitions: the partitions (one assignment's worth, minus those already prepared).
    ///   - epoch: the assignment they belong to (the earliest, when a cancelled preparation's
    ///     partitions are retried together): records of earlier assignments must not change
    ///     the state built now (``DeliveryScope/epoch``).
    /// - Throws: any error to have the runner retry the call after
    ///   ``StageRunnerConfiguration/preparationRetryDelay`` (doubling up to 30 s) while the
    ///   partitions stay paused; `CancellationError` when cancelled.
    func prepare(_ partitions: [TopicPartition], epoch: AssignmentEpoch) async throws

    /// Drops the state of partitions this worker no longer owns.
    /// - Parameter partitions: partitions earlier passed to ``prepare(_:epoch:)``.
    func release(_ partitions: [TopicPartition]) async
}
