/// Which assignment of a consumer a partition's records belong to: the one notion of partition
/// ownership that the source, the runner and the state stores share.
///
/// A source numbers its assignments in increasing order (``KafkaRecordSource`` takes the Kafka
/// consumer's assignment generation; ``InMemoryRecordSource`` counts its own), announces each with
/// ``SourceEvent/assigned(_:epoch:)`` and stamps every record with the epoch it was fetched under.
/// Work of an earlier epoch never writes into a later one: the runner keys chains, offset stores
/// and its "still current" fence by it, and a state store ignores updates of records older than
/// the assignment that rebuilt the state.
public struct AssignmentEpoch: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number; larger is later.
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Before any assignment: records and scopes built outside a source (tests, in-process stores).
    public static let initial = AssignmentEpoch(0)

    public static func < (lhs: AssignmentEpoch, rhs: AssignmentEpoch) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "epoch \(rawValue)" }
}
