import Foundation

/// Names of the Kafka headers receiptd writes on dead-lettered and retried records, defined once.
///
/// The convention follows Karafka's DLQ (`original_topic`, `original_partition`, …) with a
/// `receiptd-` prefix. The record key and value are kept byte for byte; these headers say where
/// the record came from and why it left. All values are UTF-8 text: numbers in decimal, instants
/// as RFC 3339 UTC with milliseconds.
///
/// When a record that already carries `receiptd-original-*` headers fails again (e.g. it was
/// consumed from a retry tier), those headers are kept: they always describe the first topic the
/// record was consumed from, which is where a replay puts it back.
public enum RecordHeaders {
    /// Topic the record was first consumed from.
    public static let originalTopic = "receiptd-original-topic"
    /// Its partition (decimal).
    public static let originalPartition = "receiptd-original-partition"
    /// Its offset (decimal).
    public static let originalOffset = "receiptd-original-offset"
    /// Its Kafka timestamp (RFC 3339).
    public static let originalTimestamp = "receiptd-original-timestamp"
    /// The stage that gave up (`ingest`, `verify`, `fulfil`).
    public static let stage = "receiptd-stage"
    /// On a dead letter: the attempt that failed (1 = first try). On a retry record: the attempt
    /// the retry will be (so a tier consumer passes it straight to ``StageContext/attempt``).
    public static let attempt = "receiptd-attempt"
    /// When the first attempt failed (RFC 3339); kept across retries.
    public static let firstFailedAt = "receiptd-first-failed-at"
    /// When the latest attempt failed (RFC 3339).
    public static let lastFailedAt = "receiptd-last-failed-at"
    /// The ``ReasonCode`` of the latest failure.
    public static let reason = "receiptd-reason"
    /// A bounded, human-readable description of the latest error (never the payload).
    public static let error = "receiptd-error"
    /// On a retry record: the earliest instant the tier consumer should process it (RFC 3339).
    /// The runner holds a tier record until then (the delay gate).
    public static let notBefore = "receiptd-not-before"
    /// The App Store's HTTP status of the latest failure (decimal), when the error carried one.
    public static let appleStatus = "receiptd-apple-status"
    /// The App Store's numeric `errorCode` of the latest failure (decimal), when the error carried one.
    public static let appleErrorCode = "receiptd-apple-error-code"
    /// The App Store environment of the latest failure (`Production`, `Sandbox`), when known.
    public static let environment = "receiptd-environment"

    /// On a replayed record: when `receiptd replay` republished it (RFC 3339). Kept (like any
    /// foreign header) if the record fails again, so a dead letter shows it was replayed before.
    public static let replayedAt = "receiptd-replayed-at"
    /// On a replayed record: the id of the replay run that republished it (printed in its summary).
    public static let replayId = "receiptd-replay-id"

    /// On rejections and outcomes: the topic of the input record the verdict is about, so a
    /// verdict can be traced to its record even when the input was too malformed to name its
    /// `submissionId`.
    public static let sourceTopic = "receiptd-source-topic"
    /// On rejections and outcomes: the input record's partition (decimal).
    public static let sourcePartition = "receiptd-source-partition"
    /// On rejections and outcomes: the input record's offset (decimal).
    public static let sourceOffset = "receiptd-source-offset"

    /// The source headers describing `record` (topic, partition, offset) plus the stage.
    static func source(of record: InboundRecord, stage: StageName) -> [RecordHeader] {
        [RecordHeader(key: sourceTopic, text: record.topic),
         RecordHeader(key: sourcePartition, text: String(record.partition)),
         RecordHeader(key: sourceOffset, text: String(record.offset)),
         RecordHeader(key: Self.stage, text: stage.rawValue)]
    }

    /// All provenance header names (the ones the runner rewrites). The replay markers are not
    /// among them: the runner carries them over like any header it does not own.
    public static let all: [String] = [
        originalTopic, originalPartition, originalOffset, originalTimestamp, stage, attempt,
        firstFailedAt, lastFailedAt, reason, error, notBefore, appleStatus, appleErrorCode, environment,
        sourceTopic, sourcePartition, sourceOffset,
    ]

    /// The prefix of every header receiptd writes.
    public static let prefix = "receiptd-"

    /// The attempt number carried by `headers` (1 when absent or malformed).
    public static func attempt(in headers: [RecordHeader]) -> Int {
        guard let text = value(of: attempt, in: headers), let n = Int(text), n >= 1 else { return 1 }
        return n
    }

    /// The instant in `receiptd-not-before`, if present and a valid RFC 3339 timestamp.
    public static func notBefore(in headers: [RecordHeader]) -> Date? {
        value(of: notBefore, in: headers).flatMap(ContractCoding.date(from:))
    }

    /// The last value of header `name` as UTF-8 text, if present and valid UTF-8.
    public static func value(of name: String, in headers: [RecordHeader]) -> String? {
        guard let header = headers.last(where: { $0.key == name }), let bytes = header.value else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Formats an instant for a header value (RFC 3339 UTC with milliseconds).
    public static func timestamp(_ date: Date) -> String {
        ContractCoding.timestamp(date, alwaysMilliseconds: true)
    }
}
