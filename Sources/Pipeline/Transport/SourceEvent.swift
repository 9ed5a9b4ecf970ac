import Synchronization

/// What a ``RecordSource`` delivers: records, and the partition changes of a consumer-group
/// rebalance, in one ordered stream (as librdkafka's poll loop serves both).
public enum SourceEvent: Sendable {
    /// The next records of assigned partitions (at least one), as many as the source had at hand:
    /// the runner admits them under one lock. Records of one partition arrive in offset order.
    case records([InboundRecord])
    /// These partitions were assigned to this consumer, as its assignment `epoch`; their records
    /// carry it.
    case assigned([TopicPartition], epoch: AssignmentEpoch)
    /// These partitions are being taken away. The consumer must stop starting work for them,
    /// finish (or abandon) what is in flight, store their offsets, then call
    /// ``PartitionRevocation/acknowledge()``; the source completes the rebalance only then.
    case revoked(PartitionRevocation)
}

/// A pending revocation that the runner acknowledges once the partitions' work is settled.
public struct PartitionRevocation: Sendable {
    /// The partitions being revoked.
    public let partitions: [TopicPartition]
    /// Whether the assignment was lost rather than handed over (the member's session expired):
    /// the group may already have given the partitions to another member, so in-flight work must
    /// write nothing more.
    public let lost: Bool
    private let onAcknowledge: @Sendable () -> Void
    private let acknowledged = AcknowledgedFlag()

    /// Creates a revocation.
    /// - Parameters:
    ///   - partitions: the partitions being revoked.
    ///   - lost: whether the assignment was lost (``lost``).
    ///   - onAcknowledge: called (once) when the consumer is done with them; a Kafka adapter
    ///     completes the rebalance (`unassign`/`incremental_unassign`) here.
    public init(partitions: [TopicPartition], lost: Bool = false, onAcknowledge: @escaping @Sendable () -> Void) {
        self.partitions = partitions
        self.lost = lost
        self.onAcknowledge = onAcknowledge
    }

    /// Tells the source the consumer has settled the partitions. Only the first call has an effect.
    public func acknowledge() {
        if acknowledged.set() { onAcknowledge() }
    }
}

/// A flag that can be raised once, shared by copies of a ``PartitionRevocation``.
private final class AcknowledgedFlag: Sendable {
    private let raised = Mutex(false)

    /// Raises the flag; true if this call raised it.
    func set() -> Bool {
        raised.withLock { value in
            defer { value = true }
            return !value
        }
    }
}
