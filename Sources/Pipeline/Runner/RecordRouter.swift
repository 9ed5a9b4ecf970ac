import Foundation

/// Builds the records a processed input turns into, one function per route, so the routing
/// rules (which topic, which key, which headers) are written down once.
///
/// | route | topic | key | value | headers |
/// |---|---|---|---|---|
/// | emit | the output's ``OutputTopic`` | the output's ``OutboundMessage/recordKey`` | the output as JSON | none |
/// | reject | ``Topics/rejected`` | input key | `receipt-rejected/v1` | source (input topic, partition, offset) + stage |
/// | done | ``Topics/outcomes`` | input key | `receipt-outcome/v1` | source + stage |
/// | dead letter | ``Topics/deadLetter`` | input key | input value, byte for byte | input headers + provenance |
/// | retry | `<input>.retry.<tier>` | input key | input value, byte for byte | provenance, attempt + 1, not-before |
struct RecordRouter: Sendable {
    /// The metric label of a route (`receiptd_stage_records_total{outcome}`).
    enum Route: String, Sendable {
        case emitted
        case rejected
        case done
        case deadLettered = "dead-lettered"
        case retried
    }

    let stage: StageName
    let topics: Topics
    let maxOriginalBytes: Int
    let maxErrorHeaderBytes: Int

    func emit<Output: OutboundMessage>(_ outputs: [Output]) throws -> [OutboundRecord] {
        try outputs.map { output in
            OutboundRecord(topic: topics.output(Output.outputTopic), key: Array(output.recordKey.utf8),
                           value: try ContractCoding.encode(output))
        }
    }

    func reject(_ record: InboundRecord, reason: ReasonCode, detail: String, subject: SubmissionSubject,
                now: Date) throws -> OutboundRecord {
        let rejection = ReceiptRejected(stage: stage, reason: reason, detail: detail, subject: subject, rejectedAt: now,
                                        originalValue: record.value, maxOriginalBytes: maxOriginalBytes)
        return OutboundRecord(topic: topics.rejected, key: record.key, value: try ContractCoding.encode(rejection),
                              headers: RecordHeaders.source(of: record, stage: stage))
    }

    func outcome(_ record: InboundRecord, outcome: OutcomeCode, subject: SubmissionSubject,
                 now: Date) throws -> OutboundRecord {
        let value = ReceiptOutcome(submissionId: subject.submissionId, stage: stage, outcome: outcome,
                                   transactionId: subject.transactionId, at: now)
        return OutboundRecord(topic: topics.outcomes, key: record.key, value: try ContractCoding.encode(value),
                              headers: RecordHeaders.source(of: record, stage: stage))
    }

    func deadLetter(_ record: InboundRecord, reason: ReasonCode, error: String, attempt: Int,
                    now: Date) -> OutboundRecord {
        OutboundRecord(topic: topics.deadLetter, key: record.key, value: record.value,
                       headers: provenance(record, reason: reason, error: error, attempt: attempt, now: now))
    }

    func retry(_ record: InboundRecord, tier: Int, notBefore: Date?, reason: ReasonCode, error: String,
               attempt: Int, now: Date) -> OutboundRecord {
        var headers = provenance(record, reason: reason, error: error, attempt: attempt + 1, now: now)
        if let notBefore {
            headers.append(RecordHeader(key: RecordHeaders.notBefore, text: RecordHeaders.timestamp(notBefore)))
        }
        return OutboundRecord(topic: topics.retry(of: stage, tier: tier), key: record.key, value: record.value,
                              headers: headers)
    }

    /// The input's own headers (minus receiptd's, which are rewritten) followed by provenance.
    /// `receiptd-original-*` and `receiptd-first-failed-at` are carried over when the input already
    /// has them (it came from a retry tier), so they keep describing the first failure.
    private func provenance(_ record: InboundRecord, reason: ReasonCode, error: String, attempt: Int,
                            now: Date) -> [RecordHeader] {
        let inherited = record.headers
        var headers = inherited.filter { !RecordHeaders.all.contains($0.key) }
        let carried = RecordHeaders.value(of: RecordHeaders.originalTopic, in: inherited) != nil
        func text(_ name: String, _ fallback: String) -> RecordHeader {
            let value = carried ? RecordHeaders.value(of: name, in: inherited) ?? fallback : fallback
            return RecordHeader(key: name, text: value)
        }
        headers.append(text(RecordHeaders.originalTopic, record.topic))
        headers.append(text(RecordHeaders.originalPartition, String(record.partition)))
        headers.append(text(RecordHeaders.originalOffset, String(record.offset)))
        headers.append(text(RecordHeaders.originalTimestamp, RecordHeaders.timestamp(record.timestamp)))
        headers.append(RecordHeader(key: RecordHeaders.stage, text: stage.rawValue))
        headers.append(RecordHeader(key: RecordHeaders.attempt, text: String(attempt)))
        let firstFailedAt = RecordHeaders.value(of: RecordHeaders.firstFailedAt, in: inherited)
            ?? RecordHeaders.timestamp(now)
        headers.append(RecordHeader(key: RecordHeaders.firstFailedAt, text: firstFailedAt))
        headers.append(RecordHeader(key: RecordHeaders.lastFailedAt, text: RecordHeaders.timestamp(now)))
        headers.append(RecordHeader(key: RecordHeaders.reason, text: reason.rawValue))
        headers.append(RecordHeader(key: RecordHeaders.error, text: bounded(error)))
        return headers
    }

    private func bounded(_ text: String) -> String {
        guard text.utf8.count > maxErrorHeaderBytes else { return text }
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= maxErrorHeaderBytes - 3 else { break }
            result.append(character)
            used += size
        }
        return result + "..."
    }
}
