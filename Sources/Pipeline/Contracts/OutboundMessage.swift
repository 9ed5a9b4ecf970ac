/// The output topics a stage can emit to, named by role so stages never see topic names
/// (the runner resolves them through ``Topics``).
public enum OutputTopic: String, Sendable, Hashable, CaseIterable {
    /// `receipt-ingested/v1`, ``Topics/ingested``.
    case ingested
    /// `receipt-verified/v1`, ``Topics/verified``.
    case verified
    /// `entitlement-changed/v2`, ``Topics/entitlementsChanged``.
    case entitlementsChanged
    /// `owner-purchase/v1`, ``Topics/ownerUpdates``.
    case ownerUpdates
    /// `entitlement-state/v1`, ``Topics/entitlementState``.
    case entitlementState
    case consumptionRequests
    case consumptionOutcomes
}

/// How the runner picks the partition of a stage's outputs.
public enum OutputPartitioning: String, Sendable, Hashable {
    /// The producer's partitioner decides from ``OutboundMessage/recordKey`` (the default).
    case byKey
    /// The output goes to the *same partition number* as the input record it came from, whatever
    /// its key: output partition `p` then holds exactly what was produced from input partition
    /// `p`, so whoever owns input `p` can rebuild what it emitted by reading output `p` (fulfil's
    /// ledger, ``KeyedStateStore``). The output topic needs at least as many partitions
    /// as the input. The runner also pins the stage's retry records to that partition number,
    /// so a retry tier's partition `p` holds only records of input partition `p`.
    case inputPartition
}

/// A contract message a stage emits: it knows its own topic (by role), record key and
/// partitioning, so the runner can route it without stage-specific code.
public protocol OutboundMessage: Encodable, Sendable {
    /// Where messages of this type go.
    static var outputTopic: OutputTopic { get }
    /// How their partition is chosen (default ``OutputPartitioning/byKey``).
    static var partitioning: OutputPartitioning { get }
    /// The Kafka record key (written as UTF-8). With ``OutputPartitioning/byKey`` it decides the
    /// partition and thus ordering.
    var recordKey: String { get }
    /// Where this message goes, for a stage whose output type has several (default ``outputTopic``).
    var topic: OutputTopic { get }
    /// How this message's partition is chosen (default ``partitioning``).
    var messagePartitioning: OutputPartitioning { get }
}

extension OutboundMessage {
    /// Partitioned by key unless a message type says otherwise.
    public static var partitioning: OutputPartitioning { .byKey }
    public var topic: OutputTopic { Self.outputTopic }
    public var messagePartitioning: OutputPartitioning { Self.partitioning }
}
