import Foundation

/// A record of the dead-letter topic seen through its provenance headers (``RecordHeaders``) and,
/// when the value is a JSON object, the few identifying members replay filters and listings use.
/// Never exposes the payload itself.
public struct DeadLetter: Sendable {
    /// The record as read from the dead-letter topic.
    public let record: InboundRecord
    /// `receiptd-original-topic`: where a replay puts the record back (nil if absent).
    public let originalTopic: String?
    /// `receiptd-reason` of the latest failure (nil if absent).
    public let reason: ReasonCode?
    /// `receiptd-attempt`: the attempt that failed last (1 when absent).
    public let attempt: Int
    /// When it failed last: `receiptd-last-failed-at`, else the record's own timestamp.
    public let failedAt: Date
    /// The value's top-level `bundleId` member, when the value is a JSON object with one.
    public let bundleId: String?
    /// The value's top-level `submissionId` member, when the value is a JSON object with one.
    public let submissionId: String?

    /// Reads the headers and, if the value is a JSON object, its `bundleId` and `submissionId`.
    public init(_ record: InboundRecord) {
        self.record = record
        let headers = record.headers
        originalTopic = RecordHeaders.value(of: RecordHeaders.originalTopic, in: headers).flatMap { $0.isEmpty ? nil : $0 }
        reason = RecordHeaders.value(of: RecordHeaders.reason, in: headers).map(ReasonCode.init(rawValue:))
        attempt = RecordHeaders.attempt(in: headers)
        failedAt = RecordHeaders.value(of: RecordHeaders.lastFailedAt, in: headers).flatMap(ContractCoding.date(from:))
            ?? record.timestamp
        var bundleId: String?
        var submissionId: String?
        if record.value.first == UInt8(ascii: "{"),
           let object = try? JSONSerialization.jsonObject(with: Data(record.value)) as? [String: Any] {
            bundleId = object["bundleId"] as? String
            submissionId = object["submissionId"] as? String
        }
        self.bundleId = bundleId
        self.submissionId = submissionId
    }

    /// One line for `receiptd replay --dry-run`: position, destination, reason, attempt and the
    /// submission id when known; never the payload. Values are printed as they are, except
    /// that control characters and spaces in header values are escaped so a line stays one line.
    public var listing: String {
        var line = "\(record.partition)/\(record.offset) topic=\(Self.clean(originalTopic ?? "-"))"
        line += " reason=\(Self.clean(reason?.rawValue ?? "-")) attempt=\(attempt)"
        if let submissionId { line += " submission=\(Self.clean(submissionId))" }
        return line
    }

    private static func clean(_ text: String) -> String {
        let bounded = text.count > 200 ? String(text.prefix(200)) + "..." : text
        var out = ""
        for scalar in bounded.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar == " " {
                out += String(format: "\\u{%X}", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
