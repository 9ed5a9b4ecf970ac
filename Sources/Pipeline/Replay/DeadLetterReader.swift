/// The part of a dead-letter partition a replay reads: `[start, end)` as of when it was opened.
///
/// The end is fixed when the reader opens, so dead letters written *during* the replay (a replayed
/// record failing again) are never picked up by the same run.
public struct DeadLetterRange: Sendable, Hashable {
    /// The dead-letter partition.
    public var partition: Int32
    /// First offset to read.
    public var start: Int64
    /// One past the last offset to read.
    public var end: Int64

    /// Creates a range.
    public init(partition: Int32, start: Int64, end: Int64) {
        self.partition = partition
        self.start = start
        self.end = end
    }

    /// Offsets in the range (records, unless the log has gaps).
    public var span: Int64 { max(0, end - start) }
}

/// Reads the dead-letter topic for a replay: by explicit partition assignment (no consumer
/// group, nothing committed), from fixed starts to the ends the topic had when it was opened.
public protocol DeadLetterReader: Sendable {
    /// Resolves what will be read.
    /// - Parameters:
    ///   - partition: only this partition (nil: every partition).
    ///   - fromOffset: first offset per partition (nil: the oldest retained).
    ///   - toOffset: last offset per partition, inclusive (nil: the newest as of now).
    /// - Returns: the non-empty ranges to read.
    /// - Throws: when the topic or partition does not exist or the cluster does not answer.
    func open(partition: Int32?, fromOffset: Int64?, toOffset: Int64?) async throws -> [DeadLetterRange]

    /// The records of the opened ranges, in offset order per partition; the sequence ends after
    /// the last record of every range.
    func records() -> AsyncThrowingStream<InboundRecord, any Error>

    /// Releases the reader's resources.
    func close() async
}
