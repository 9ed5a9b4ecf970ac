/// The output topics a stage can emit to, named by role so stages never see topic names
/// (the runner resolves them through ``Topics``).
public enum OutputTopic: String, Sendable, Hashable, CaseIterable {
    /// `receipt-ingested/v1`, ``Topics/ingested``.
    case ingested
    /// `receipt-verified/v1`, ``Topics/verified``.
    case verified
    /// `entitlement-changed/v1`, ``Topics/entitlementsChanged``.
    case entitlementsChanged
}

/// A contract message a stage emits: it knows its own topic (by role) and record key, so the
/// runner can route it without stage-specific code.
public protocol OutboundMessage: Encodable, Sendable {
    /// Where messages of this type go.
    static var outputTopic: OutputTopic { get }
    /// The Kafka record key (written as UTF-8), which decides partitioning and thus ordering.
    var recordKey: String { get }
}
