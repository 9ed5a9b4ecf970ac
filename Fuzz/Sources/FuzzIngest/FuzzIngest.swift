// fuzz-max-len: 24576 (the largest seed, an Apple notification submission, is about 19 KB)
// fuzz-dict: json.dict
import Foundation
import FuzzSupport
import Pipeline

/// The ingest decoder, `IngestStage().ingest(bytes, now:)`, over arbitrary record values.
///
/// Invariants: a rejection carries one of the documented ingest codes and a detail, and its
/// `receipt-rejected/v1` record encodes and decodes (with the original cut to half its size, at
/// a UTF-8 boundary); an accepted submission has a trimmed non-empty payload, an unambiguous
/// owner key, and its `receipt-ingested/v1` record survives an encode/decode round trip (else
/// verify could not read what ingest published, and would dead-letter it).
let target = FuzzTarget(name: "FuzzIngest", seeds: ingestSeeds) { input in
    let bytes = Array(input)
    switch stage.ingest(bytes, now: FuzzVerifier.now) {
    case .failure(let rejection):
        fuzzCheck(documentedReasons.contains(rejection.reason), "undocumented ingest reason \(rejection.reason)")
        fuzzCheck(!rejection.detail.isEmpty, "rejection \(rejection.reason) without detail")
        let record = ReceiptRejected(stage: .ingest, reason: rejection.reason, detail: rejection.detail,
                                     subject: rejection.subject, rejectedAt: FuzzVerifier.now,
                                     originalValue: bytes, maxOriginalBytes: bytes.count / 2)
        if record.originalEncoding == .utf8 {
            fuzzCheck(bytes.starts(with: Array(record.original.utf8)), "the cut original is not a prefix of the record")
        }
        let decoded = try? ContractCoding.decode(ReceiptRejected.self, from: ContractCoding.encode(record))
        fuzzCheck(decoded?.original == record.original && decoded?.reason == record.reason,
                  "receipt-rejected/v1 does not round-trip")
    case .success(let submission):
        let payload = Array(submission.payload.utf8)
        fuzzCheck(!payload.isEmpty, "accepted an empty payload")
        fuzzCheck(![0x20, 0x09, 0x0A, 0x0D].contains(payload.first!) && ![0x20, 0x09, 0x0A, 0x0D].contains(payload.last!),
                  "payload not trimmed")
        fuzzCheck(OwnerKey(encoded: submission.recordKey) == submission.owner, "ambiguous owner key \(submission.recordKey)")
        let encoded = try? ContractCoding.encode(submission)
        fuzzCheck(encoded != nil, "receipt-ingested/v1 does not encode")
        let decoded = encoded.flatMap { try? ContractCoding.decode(IngestedSubmission.self, from: $0) }
        fuzzCheck(decoded != nil, "receipt-ingested/v1 does not decode: \(String(decoding: encoded ?? [], as: UTF8.self).prefix(300))")
        if var decoded {
            // Timestamps are written with millisecond precision.
            fuzzCheck(abs(decoded.submittedAt.timeIntervalSince(submission.submittedAt)) < 0.001, "submittedAt changed")
            decoded.submittedAt = submission.submittedAt
            fuzzCheck(decoded == submission, "receipt-ingested/v1 round trip changed the submission")
        }
    }
}

let stage = IngestStage()

/// The ingest codes of the README's reason-code table.
let documentedReasons: Set<ReasonCode> = [
    .recordTooLarge, .invalidUTF8, .invalidJSON, .unsupportedSchema, .missingField, .invalidField,
    .fieldTooLong, .invalidTimestamp, .unsupportedKind, .malformedPayload,
]

func ingestSeeds() -> [FuzzSeed] {
    typealias S = FuzzSamples
    var seeds: [FuzzSeed] = [
        FuzzSeed("valid-signedTransaction", text: S.submission()),
        FuzzSeed("valid-transactionId", text: S.submission(["kind": #""transactionId""#, "payload": #"" 2000000123456789\n""#])),
        FuzzSeed("valid-appReceipt-wrapped", text: S.submission(["kind": #""appReceipt""#, "payload": #""\n  AQID\r\nBA\t""#])),
        FuzzSeed("valid-extra-members", text: S.submission(["clientVersion": #""1.2.3""#, "extra": #"{"nested":[true,null,1.5e3]}"#])),
        FuzzSeed("valid-unicode-user", text: S.submission(["userId": #""team/\u00fc-42 ü""#, "submittedAt": #""2026-11-30T07:59:00.123+02:00""#])),
        FuzzSeed("invalid-utf8", [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D]),
        FuzzSeed("invalid-json", text: #"{"schema":"receipt-submitted/v1","#),
        FuzzSeed("invalid-json-array", text: "[1,2,3]"),
        FuzzSeed("unsupported-schema", text: S.submission(["schema": #""receipt-submitted/v2""#])),
        FuzzSeed("missing-field", text: S.submission(["userId": nil])),
        FuzzSeed("missing-field-null", text: S.submission(["payload": "null"])),
        FuzzSeed("invalid-field-type", text: S.submission(["submissionId": "42"])),
        FuzzSeed("invalid-field-bundle", text: S.submission(["bundleId": #""com..example/x""#])),
        FuzzSeed("field-too-long", text: S.submission(["submissionId": S.quoted(String(repeating: "a", count: 300))])),
        FuzzSeed("invalid-timestamp", text: S.submission(["submittedAt": #""2026-02-30T00:00:00Z""#])),
        FuzzSeed("unsupported-kind", text: S.submission(["kind": #""legacyReceipt""#])),
        FuzzSeed("malformed-payload-jws", text: S.submission(["payload": #""eyJhbGciOiJFUzI1NiJ9.e30""#])),
        FuzzSeed("malformed-payload-receipt", text: S.submission(["kind": #""appReceipt""#, "payload": #""AQID===""#])),
        FuzzSeed("malformed-payload-transactionId", text: S.submission(["kind": #""transactionId""#, "payload": #""12a""#])),
        // Regression seeds: accepted before ContractCoding.date(from:) checked the year range, then
        // undecodable downstream (written as year -1 and year 10000).
        FuzzSeed("regression-submittedAt-before-year-0", text: S.submission(["submittedAt": #""0000-01-01T00:00:00+00:01""#])),
        FuzzSeed("regression-submittedAt-after-year-9999", text: S.submission(["submittedAt": #""9999-12-31T23:59:59.9999Z""#])),
    ]
    let kinds = ["serverNotification": "notification", "signedRenewalInfo": "renewalinfo", "signedTransaction": "transaction"]
    for (name, jws) in FuzzFixtures.appleJWS.map({ ($0.name, $0.text) }) {
        guard let kind = kinds.first(where: { name.contains($0.value) })?.key else { continue }
        seeds.append(FuzzSeed("apple-\(name)", text: S.submission(["kind": S.quoted(kind), "payload": S.quoted(jws)])))
    }
    for (name, receipt) in FuzzFixtures.appleReceipts.map({ ($0.name, $0.text) }) where receipt.utf8.count < 16_000 {
        seeds.append(FuzzSeed("apple-\(name)", text: S.submission(["kind": #""appReceipt""#, "payload": S.quoted(receipt)])))
    }
    return seeds
}

/// libFuzzer calls this once before the first input (see ``FuzzTarget/initialize()``).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    target.initialize()
}

/// libFuzzer calls this for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target.run(data, size)
}
