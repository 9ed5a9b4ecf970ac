import Foundation
import MutationTesting
import Testing
@testable import Pipeline

/// Seeded random mutations (bit flips, truncation, insertion, byte duplication and deletion,
/// segment swaps) of valid `receipt-submitted/v1` records, thousands of cases per test. Ingest
/// never crashes and always answers either an accepted submission that survives the
/// `receipt-ingested/v1` round trip (so verify can read it) or a rejection with one of the
/// documented ingest codes and a detail, whose `receipt-rejected/v1` record encodes.
///
/// The in-process twin of the `FuzzIngest` libFuzzer target in `Fuzz/`; a failure names the
/// case index and mutations, and replays identically because the generator is seeded.
@Suite struct IngestPropertyTests {
    static let cases = 4_000

    /// The ingest rows of the README's reason-code table.
    static let documentedReasons: Set<ReasonCode> = [
        .recordTooLarge, .invalidUTF8, .invalidJSON, .unsupportedSchema, .missingField, .invalidField,
        .fieldTooLong, .invalidTimestamp, .unsupportedKind, .malformedPayload,
    ]

    /// Valid records of every kind.
    static let validRecords: [[UInt8]] = [
        Fixtures.submission(),
        Fixtures.submission(["kind": "serverNotification", "userId": "team/ü-42", "extra": ["nested": [1, true]]]),
        Fixtures.submission(["kind": "appReceipt", "payload": "\n  AQID\r\nBAUG\tBwg=", "submittedAt": "2026-11-30T07:59:00.123+02:00"]),
        Fixtures.submission(["kind": "transactionId", "payload": " 2000000123456789\n"]),
    ]

    @Test func mutatedRecordsAreAcceptedOrRejectedWithADocumentedReason() {
        let mutator = Mutator(separator: UInt8(ascii: ","))
        var generator = SeededGenerator(seed: 0x1A6E_0001)
        var report = Report()
        for index in 0..<Self.cases {
            let (bytes, mutations) = mutator.mutate(Self.validRecords[index % Self.validRecords.count],
                                                    count: Int.random(in: 1...3, using: &generator), using: &generator)
            report.check(bytes, case: "\(index) \(mutations)")
        }
        report.expectClean(minimumDistinctReasons: 5)
    }

    /// Mutates one field's text at a time (re-encoded as valid JSON), so the mutations reach the
    /// field checks, the payload normaliser and the timestamp parser instead of the JSON syntax.
    @Test func mutatedFieldValuesAreAcceptedOrRejectedWithADocumentedReason() {
        let fields: [(name: String, value: String, kind: String, alphabet: String)] = [
            ("payload", Fixtures.jws, "signedTransaction", "ABCXYZabcxyz0189-_.=+/ \n"),
            ("payload", "AQIDBAUGBwgJ", "appReceipt", "AQgw09+/=-_ \r\n\t"),
            ("payload", "2000000123456789", "transactionId", "0123456789 a-\n"),
            ("submittedAt", Fixtures.submittedAt, "signedTransaction", "0123456789-:+TtZz. "),
            ("submittedAt", "2026-11-30T07:59:00.123+02:00", "signedTransaction", "0123456789-:+TtZz. "),
            ("submittedAt", "0000-01-01T00:00:00+00:00", "signedTransaction", "0123456789-:+TtZz. "),
            ("submittedAt", "9999-12-31T23:59:59.999-00:00", "signedTransaction", "0123456789-:+TtZz. "),
            ("submissionId", "sub-1.a_b:c", "signedTransaction", "aZ09._:-/ é"),
            ("bundleId", "com.example.game", "signedTransaction", "aZ09.-_/ "),
            ("userId", "user-1", "signedTransaction", "aZ09/ \u{1}\u{7F}é"),
            ("kind", "signedTransaction", "signedTransaction", "aeinrsty STx"),
        ]
        var generator = SeededGenerator(seed: 0x1A6E_0002)
        var report = Report()
        // Half the cases: almost all are accepted, and each acceptance pays for a SHA-256 and a
        // round trip (about 1 ms in a debug build).
        for index in 0..<Self.cases / 2 {
            let field = fields[index % fields.count]
            let separator = field.name == "submittedAt" ? UInt8(ascii: ":") : UInt8(ascii: ".")
            let mutator = Mutator(separator: separator, alphabet: Array(field.alphabet.utf8))
            let (bytes, mutations) = mutator.mutate(Array(field.value.utf8), count: Int.random(in: 1...2, using: &generator),
                                                    using: &generator)
            var overrides: [String: Any?] = ["kind": field.kind]
            overrides[field.name] = String(decoding: bytes, as: UTF8.self)
            report.check(Fixtures.submission(overrides), case: "\(index) \(field.name) \(mutations)")
        }
        report.expectClean(minimumDistinctReasons: 5)
        #expect(report.accepted > 0)
    }
}

/// Checks ingest's answer to one record and collects violations.
private struct Report {
    var failures: [String] = []
    var reasons: Set<ReasonCode> = []
    var accepted = 0
    let stage = IngestStage()

    mutating func check(_ bytes: [UInt8], case label: @autoclosure () -> String) {
        switch stage.ingest(bytes, now: Fixtures.now) {
        case .failure(let rejection):
            reasons.insert(rejection.reason)
            if !IngestPropertyTests.documentedReasons.contains(rejection.reason) || rejection.detail.isEmpty {
                failures.append("case \(label()): undocumented or empty rejection \(rejection)")
            }
            let record = ReceiptRejected(stage: .ingest, reason: rejection.reason, detail: rejection.detail,
                                         subject: rejection.subject, rejectedAt: Fixtures.now, originalValue: bytes)
            if (try? ContractCoding.decode(ReceiptRejected.self, from: ContractCoding.encode(record))) != record {
                failures.append("case \(label()): receipt-rejected/v1 does not round-trip")
            }
        case .success(let submission):
            accepted += 1
            if let problem = Self.problem(with: submission) { failures.append("case \(label()): \(problem)") }
        }
    }

    /// What is wrong with an accepted submission, if anything.
    static func problem(with submission: IngestedSubmission) -> String? {
        let payload = Array(submission.payload.utf8)
        guard let first = payload.first, let last = payload.last else { return "accepted an empty payload" }
        if [0x20, 0x09, 0x0A, 0x0D].contains(first) || [0x20, 0x09, 0x0A, 0x0D].contains(last) { return "payload not trimmed" }
        if OwnerKey(encoded: submission.recordKey) != submission.owner { return "ambiguous owner key \(submission.recordKey)" }
        guard let encoded = try? ContractCoding.encode(submission),
              var decoded = try? ContractCoding.decode(IngestedSubmission.self, from: encoded) else {
            return "receipt-ingested/v1 does not round-trip (submittedAt \(submission.submittedAt.timeIntervalSince1970))"
        }
        // Timestamps are written with millisecond precision.
        guard abs(decoded.submittedAt.timeIntervalSince(submission.submittedAt)) < 0.001 else { return "submittedAt changed" }
        decoded.submittedAt = submission.submittedAt
        return decoded == submission ? nil : "receipt-ingested/v1 round trip changed the submission"
    }

    func expectClean(minimumDistinctReasons: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))", sourceLocation: sourceLocation)
        #expect(reasons.count >= minimumDistinctReasons, "reasons seen: \(reasons.map(\.rawValue).sorted())",
                sourceLocation: sourceLocation)
    }
}
