import Foundation

/// Turns a dead letter back into the record its stage originally consumed.
///
/// | field | replayed record |
/// |---|---|
/// | topic | `receiptd-original-topic` |
/// | key, value | byte for byte (the key keeps per-key partition locality and order) |
/// | headers | the record's own headers without any `receiptd-*` header (attempt count, failure provenance, earlier replay markers), then `receiptd-replayed-at` and `receiptd-replay-id` |
///
/// Without `receiptd-attempt` the stage starts again at attempt 1, with the full retry budget.
public enum ReplayRepublisher {
    /// The record to publish for `letter`, or nil when it names no original topic.
    /// - Parameters:
    ///   - letter: the dead letter.
    ///   - replayId: the replay run's id (``RecordHeaders/replayId``).
    ///   - at: the replay time (``RecordHeaders/replayedAt``).
    public static func republished(_ letter: DeadLetter, replayId: String, at: Date) -> OutboundRecord? {
        guard let topic = letter.originalTopic else { return nil }
        var headers = letter.record.headers.filter { !$0.key.hasPrefix(RecordHeaders.prefix) }
        headers.append(RecordHeader(key: RecordHeaders.replayedAt, text: RecordHeaders.timestamp(at)))
        headers.append(RecordHeader(key: RecordHeaders.replayId, text: replayId))
        return OutboundRecord(topic: topic, key: letter.record.key, value: letter.record.value, headers: headers)
    }
}
