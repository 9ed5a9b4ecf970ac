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
///
/// Partitions: by key, except for a stage whose outputs are ``OutputPartitioning/inputPartition``:
/// its outputs *and its retry records* go to the input record's partition number, so a retry
/// tier's partition `p` mirrors input partition `p` and the owner of `p` stays the only writer of
/// output partition `p`. Rejections, outcomes and dead letters are always partitioned by key.
struct RecordRouter: Sendable {
    /// Why a record leaves for a retry tier or the dead-letter topic: what the provenance
    /// headers say about the latest failure.
    struct Failure: Sendable, Equatable {
        var reason: ReasonCode
        /// A bounded, payload-free description (``StageRunner/summary(of:)``).
        var error: String
        var appleStatus: Int?
        var appleErrorCode: Int?
        var environment: String?

        init(reason: ReasonCode, error: String, appleStatus: Int? = nil, appleErrorCode: Int? = nil,
             environment: String? = nil) {
            self.reason = reason
            self.error = error
            self.appleStatus = appleStatus
            self.appleErrorCode = appleErrorCode
            self.environment = environment
        }

        /// The failure a classified error describes (its metadata included).
        init(_ classified: any ClassifiedError, error: String) {
            self.init(reason: classified.reason, error: error, appleStatus: classified.appleStatus,
                      appleErrorCode: classified.appleErrorCode, environment: classified.environment)
        }
    }

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
    /// How the stage's outputs (and, for ``OutputPartitioning/inputPartition``, its retry records)
    /// are partitioned.
    var partitioning: OutputPartitioning = .byKey

    /// Takes the outputs: each is moved out of the array and encoded from there, where reading
    /// them in place (`map`, indices) copied each one, and every string it holds, per accessor.
    func emit<Output: OutboundMessage>(_ outputs: consuming [Output], from record: InboundRecord) throws -> [OutboundRecord] {
        var records: [OutboundRecord] = []
        records.reserveCapacity(outputs.count)
        // Reversed through the buffer (whose swaps are moves), then popped: both move outputs, where
        // `Array.reverse()` and `removeFirst()` copy them.
        outputs.withUnsafeMutableBufferPointer { $0.reverse() }
        while let output = outputs.popLast() {
            records.append(OutboundRecord(topic: topics.output(output.topic), key: Array(output.recordKey.utf8),
                                          value: try ContractCoding.encode(output),
                                          partition: output.messagePartitioning == .inputPartition ? record.partition : nil))
        }
        return records
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

    func deadLetter(_ record: InboundRecord, failure: Failure, attempt: Int, now: Date) -> OutboundRecord {
        OutboundRecord(topic: topics.deadLetter, key: record.key, value: record.value,
                       headers: provenance(record, failure: failure, attempt: attempt, now: now))
    }

    func retry(_ record: InboundRecord, tier: Int, notBefore: Date?, failure: Failure, attempt: Int,
               now: Date) -> OutboundRecord {
        var headers = provenance(record, failure: failure, attempt: attempt + 1, now: now)
        if let notBefore {
            headers.append(RecordHeader(key: RecordHeaders.notBefore, text: RecordHeaders.timestamp(notBefore)))
        }
        return OutboundRecord(topic: topics.retry(of: stage, tier: tier), key: record.key, value: record.value,
                              headers: headers, partition: partitioning == .inputPartition ? record.partition : nil)
    }

    /// The input's own headers (minus receiptd's, which are rewritten) followed by provenance.
    /// `receiptd-original-*` and `receiptd-first-failed-at` are carried over when the input already
    /// has them (it came from a retry tier), so they keep describing the first failure.
    private func provenance(_ record: InboundRecord, failure: Failure, attempt: Int, now: Date) -> [RecordHeader] {
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
        headers.append(RecordHeader(key: RecordHeaders.reason, text: failure.reason.rawValue))
        headers.append(RecordHeader(key: RecordHeaders.error, text: bounded(failure.error)))
        if let status = failure.appleStatus {
            headers.append(RecordHeader(key: RecordHeaders.appleStatus, text: String(status)))
        }
        if let code = failure.appleErrorCode {
            headers.append(RecordHeader(key: RecordHeaders.appleErrorCode, text: String(code)))
        }
        if let environment = failure.environment {
            headers.append(RecordHeader(key: RecordHeaders.environment, text: bounded(environment)))
        }
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
