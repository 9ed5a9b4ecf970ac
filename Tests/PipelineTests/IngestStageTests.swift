import AppStore
import Foundation
import Testing
@testable import Pipeline

@Suite struct IngestStageTests {
    let stage = IngestStage()

    private func rejection(_ bytes: [UInt8], stage: IngestStage = IngestStage()) -> Rejection? {
        if case .failure(let rejection) = stage.ingest(bytes, now: Fixtures.now) { return rejection }
        return nil
    }

    private func accepted(_ bytes: [UInt8]) throws -> IngestedSubmission {
        try stage.ingest(bytes, now: Fixtures.now).get()
    }

    // MARK: accepted kinds

    @Test(arguments: [SubmissionKind.signedTransaction, .signedRenewalInfo, .serverNotification])
    func jwsKindsAreAccepted(kind: SubmissionKind) throws {
        let submission = try accepted(Fixtures.submission(["kind": kind.rawValue]))
        #expect(submission.kind == kind)
        #expect(submission.payload == Fixtures.jws)
        #expect(submission.schema == "receipt-ingested/v1")
        #expect(submission.payloadSHA256 == SHA256.hexDigest(Fixtures.jws))
        #expect(submission.ingestedAt == Fixtures.now)
        #expect(submission.submittedAt == Fixtures.date(Fixtures.submittedAt))
        #expect(submission.recordKey == "com.example.game/user-1")
    }

    /// The documents the tape leaves to the parser (escaped or non-ASCII member names, wide
    /// objects) read as the plain one does, and refuse alike.
    @Test func submissionsTheTapeLeavesToTheParserReadTheSame() throws {
        let plain = try accepted(Fixtures.submission())
        let text = String(decoding: Fixtures.submission(), as: UTF8.self)
        let escaped = text.replacingOccurrences(of: #""schema""#, with: #""\u0073chema""#)
        let foreign = text.replacingOccurrences(of: "{", with: "{\"ünknown\":1,")
        let wide = text.replacingOccurrences(of: "{", with: "{" + (0..<30).map { "\"extra\($0)\":\($0)," }.joined())
        for variant in [escaped, foreign, wide] {
            #expect(try accepted(Array(variant.utf8)) == plain, "\(variant.prefix(80))")
        }
        let duplicated = text.replacingOccurrences(of: "{", with: #"{"\u0062undleId":"x","#)
        #expect(rejection(Array(duplicated.utf8))?.reason == .invalidJSON)
        #expect(rejection(Array("[1]".utf8))?.detail == "record value is a JSON array, not an object")
        #expect(rejection(Array("[1,".utf8))?.reason == .invalidJSON)
    }

    @Test func appReceiptIsAccepted() throws {
        let receipt = Data((0..<90).map { UInt8($0) }).base64EncodedString()
        let submission = try accepted(Fixtures.submission(["kind": "appReceipt", "payload": receipt]))
        #expect(submission.kind == .appReceipt)
        #expect(submission.payload == receipt)
    }

    @Test func transactionIdIsAccepted() throws {
        let submission = try accepted(Fixtures.submission(["kind": "transactionId", "payload": " 2000000123456789\n"]))
        #expect(submission.payload == "2000000123456789")
    }

    @Test func appReceiptWhitespaceAndLineBreaksAreRemoved() throws {
        let receipt = Data((0..<200).map { UInt8(truncatingIfNeeded: $0 * 7) }).base64EncodedString()
        var wrapped = ""
        for (index, character) in receipt.enumerated() {
            if index > 0 && index % 64 == 0 { wrapped += "\r\n" }
            if index % 10 == 5 { wrapped += " \t" }
            wrapped.append(character)
        }
        let submission = try accepted(Fixtures.submission(["kind": "appReceipt", "payload": "\n  " + wrapped + "\n"]))
        #expect(submission.payload == receipt)
        #expect(submission.payloadSHA256 == SHA256.hexDigest(receipt))
    }

    @Test func appReceiptMissingPaddingIsCompleted() throws {
        let receipt = Data([1, 2, 3, 4]).base64EncodedString()  // "AQIDBA=="
        let submission = try accepted(Fixtures.submission(["kind": "appReceipt", "payload": "AQIDBA"]))
        #expect(submission.payload == receipt)
    }

    @Test func unknownExtraFieldsAreIgnored() throws {
        _ = try accepted(Fixtures.submission(["clientVersion": "1.2.3", "extra": ["nested": true]]))
    }

    @Test func userIdMayContainSlashAndUnicode() throws {
        let submission = try accepted(Fixtures.submission(["userId": "team/ü-42"]))
        #expect(submission.recordKey == "com.example.game/team/ü-42")
        #expect(OwnerKey(encoded: submission.recordKey) == OwnerKey(bundleId: "com.example.game", userId: "team/ü-42"))
    }

    @Test(arguments: ["<absent>", "<null>", "", "  "])
    func serverNotificationMayOmitTheUserAndIsKeyedByItsPayloadHash(userId: String) throws {
        let value: Any? = switch userId {
        case "<absent>": nil
        case "<null>": NSNull()
        default: userId
        }
        let submission = try accepted(Fixtures.submission(["kind": "serverNotification", "userId": value]))
        #expect(submission.userId == "")
        #expect(submission.recordKey == "com.example.game/" + SHA256.hexDigest(Fixtures.jws))
        #expect(submission.recordKey == "com.example.game/" + submission.payloadSHA256)
        let decoded = try ContractCoding.decode(IngestedSubmission.self, from: ContractCoding.encode(submission))
        #expect(decoded == submission)
    }

    @Test(arguments: [SubmissionKind.signedTransaction, .signedRenewalInfo, .appReceipt, .transactionId])
    func otherKindsWithoutAUserAreMissingAField(kind: SubmissionKind) {
        let payload = switch kind {
        case .appReceipt: "AQID"
        case .transactionId: "2000000123456789"
        default: Fixtures.jws
        }
        for value: Any? in [nil, NSNull(), "", "  "] {
            let result = rejection(Fixtures.submission(["kind": kind.rawValue, "payload": payload, "userId": value]))
            #expect(result?.reason == .missingField, "\(kind) userId=\(String(describing: value))")
            #expect(result?.detail.contains("userId") == true)
            #expect(result?.subject.userId == nil, "an absent user is unknown, not empty")
            #expect(result?.subject.submissionId == "sub-1")
        }
    }

    @Test func processEmitsOneIngestedSubmission() async throws {
        let result = try await stage.process(Fixtures.submission(), context: Fixtures.context())
        guard case .emit(let outputs) = result else { Issue.record("expected emit, got \(result)"); return }
        #expect(outputs.count == 1)
        #expect(outputs[0].submissionId == "sub-1")
    }

    // MARK: one test per rejection class

    @Test func recordTooLarge() {
        let small = IngestStage(configuration: IngestConfiguration(maxRecordBytes: 100))
        #expect(rejection(Fixtures.submission(), stage: small)?.reason == .recordTooLarge)
        #expect(rejection([UInt8](repeating: 0x20, count: 256 * 1024 + 1))?.reason == .recordTooLarge)
    }

    /// The word-at-a-time ASCII skip decides as decoding the whole record would: a non-ASCII
    /// sequence (valid or not, whole or cut short) at every offset around the 8-byte words.
    @Test func utf8CheckAgreesWithDecodingAtEveryOffset() {
        let sequences: [[UInt8]] = [[0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xFF], [0xC3],
                                    [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x80]]
        for sequence in sequences {
            for offset in 0...20 {
                for tail in [0, 1, 7, 9] {
                    let bytes = Array(repeating: UInt8(ascii: "a"), count: offset) + sequence
                        + Array(repeating: UInt8(ascii: "b"), count: tail)
                    #expect(IngestStage.isValidUTF8(bytes) == (String(validating: bytes, as: UTF8.self) != nil),
                            "\(sequence) at \(offset), \(tail) after")
                }
            }
        }
        #expect(IngestStage.isValidUTF8([]))
        #expect(IngestStage.isValidUTF8(Array("0123456789abcdef".utf8)))
    }

    @Test func bundleIdShapes() {
        for valid in ["com.demo.game", "a", "a-b.c1", "A.B-C.9"] { #expect(IngestStage.isValidBundleId(valid), "\(valid)") }
        for invalid in ["", ".", "a.", ".a", "a..b", "a/b", "a b", "é.a", "a_b"] {
            #expect(!IngestStage.isValidBundleId(invalid), "\(invalid)")
        }
    }

    @Test func invalidUTF8() {
        #expect(rejection([0x7B, 0xFF, 0xFE, 0x7D])?.reason == .invalidUTF8)
    }

    @Test(arguments: ["", "not json", "{\"schema\":", "[1,2,3]", "\"a string\"", "42"])
    func invalidJSON(text: String) {
        #expect(rejection(Array(text.utf8))?.reason == .invalidJSON)
    }

    @Test(arguments: ["<absent>", "receipt-submitted/v2", "<number>", "receipt-ingested/v1"])
    func unsupportedSchema(schema: String) {
        let value: Any? = switch schema {
        case "<absent>": nil
        case "<number>": 1
        default: schema
        }
        let result = rejection(Fixtures.submission(["schema": value]))
        #expect(result?.reason == .unsupportedSchema)
    }

    @Test(arguments: ["submissionId", "userId", "bundleId", "kind", "payload", "submittedAt"])
    func missingField(name: String) {
        #expect(rejection(Fixtures.submission([name: nil]))?.reason == .missingField)
        #expect(rejection(Fixtures.submission([name: NSNull()]))?.reason == .missingField)
        #expect(rejection(Fixtures.submission([name: "   "]))?.reason == .missingField)
    }

    @Test(arguments: [
        ("submissionId", "has space"), ("submissionId", "a/b"), ("bundleId", "com..example"),
        ("bundleId", "com.example/game"), ("bundleId", ".com.example"), ("bundleId", "com.exämple"),
        ("userId", "bad\u{0007}user"),
    ])
    func invalidFieldCharacters(name: String, value: String) {
        let result = rejection(Fixtures.submission([name: value]))
        #expect(result?.reason == .invalidField, "\(name)=\(value)")
    }

    @Test(arguments: ["submissionId", "userId", "bundleId", "kind", "payload", "submittedAt"])
    func fieldOfWrongJSONType(name: String) {
        #expect(rejection(Fixtures.submission([name: 12345]))?.reason == .invalidField)
    }

    @Test func fieldTooLong() {
        #expect(rejection(Fixtures.submission(["submissionId": String(repeating: "a", count: 129)]))?.reason == .fieldTooLong)
        #expect(rejection(Fixtures.submission(["userId": String(repeating: "ü", count: 129)]))?.reason == .fieldTooLong)
        #expect(rejection(Fixtures.submission(["bundleId": String(repeating: "a", count: 156)]))?.reason == .fieldTooLong)
        #expect(rejection(Fixtures.submission(["submissionId": String(repeating: "a", count: 128)])) == nil)
    }

    @Test func unsupportedKind() {
        let result = rejection(Fixtures.submission(["kind": "playStoreToken"]))
        #expect(result?.reason == .unsupportedKind)
        #expect(result?.subject.kind == "playStoreToken")
        #expect(result?.subject.submissionId == "sub-1")
    }

    @Test(arguments: ["yesterday", "2026-11-30", "2026-13-01T00:00:00Z", "2026-11-30T06:00:00"])
    func invalidTimestamp(value: String) {
        #expect(rejection(Fixtures.submission(["submittedAt": value]))?.reason == .invalidTimestamp)
    }

    /// Regression (found by the `FuzzIngest` round-trip invariant): an offset or millisecond
    /// rounding that carries the instant outside years 0000–9999 was accepted, and the
    /// `receipt-ingested/v1` record then carried `"00-1-12-31T23:59:00Z"`, which verify cannot
    /// decode (the submission would have been dead-lettered instead of rejected).
    @Test(arguments: ["0000-01-01T00:00:00+00:01", "0000-01-01T00:00:00.000+23:59", "9999-12-31T23:59:59-00:01",
                      "9999-12-31T23:59:59.9999Z"])
    func timestampOutsideWritableYears(value: String) {
        #expect(rejection(Fixtures.submission(["submittedAt": value]))?.reason == .invalidTimestamp)
    }

    @Test(arguments: ["0000-01-01T00:00:00Z", "0000-01-01T00:01:00+00:01", "9999-12-31T23:59:59.999Z",
                      "9999-12-31T23:59:59.9994Z", "9999-12-31T22:59:59+23:00"])
    func timestampAtTheEdgesOfWritableYearsRoundTrips(value: String) throws {
        let submission = try accepted(Fixtures.submission(["submittedAt": value]))
        let decoded = try ContractCoding.decode(IngestedSubmission.self, from: ContractCoding.encode(submission))
        #expect(abs(decoded.submittedAt.timeIntervalSince(submission.submittedAt)) < 0.001)
    }

    @Test(arguments: [
        "onlyone", "two.segments", "a.b.c.d", "a..c", "a.b.c=", "a.b+c.d", Fixtures.base64URL("not json") + ".bbbb.cccc",
    ])
    func malformedJWS(payload: String) {
        let result = rejection(Fixtures.submission(["payload": payload]))
        #expect(result?.reason == .malformedPayload, "\(payload)")
        #expect(result?.subject.payloadSHA256 == SHA256.hexDigest(payload))
    }

    /// A signature whose last character carries bits beyond the 64 bytes (86 characters leave 4
    /// unused) decodes to the same bytes in a lenient decoder, but the verifier accepts canonical
    /// base64url only: ingest refuses it at once instead of passing on what verify would refuse.
    @Test func nonCanonicalLastCharacterIsRefusedByIngestAsByTheVerifier() throws {
        let signed = LifecycleHarness.sign(AppleShapes.Transaction(
            id: "2000000000000042", original: "2000000000000042", product: "com.demo.unlock.pro", type: .nonConsumable,
            purchase: AppleShapes.day(-1), signed: AppleShapes.day(0)).json())
        let verifier = try SignedDataVerifier(configuration: SignedDataVerifierConfiguration(
            trustAnchors: [LifecycleHarness.pki.root], environment: .any))
        #expect(verifier.verifyAndDecodeTransaction(signed).value != nil)
        #expect(try accepted(Fixtures.submission(["payload": signed, "bundleId": LifecycleHarness.bundleId])).payload == signed)

        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let signature = signed.split(separator: ".")[2]
        #expect(signature.count % 4 == 2)
        let last = try #require(alphabet.firstIndex(of: signature.last!))
        #expect(last & 0x0F == 0)
        let altered = String(signed.dropLast()) + String(alphabet[last | 0x01])
        let result = rejection(Fixtures.submission(["payload": altered]))
        #expect(result?.reason == .malformedPayload)
        #expect(result?.detail == "JWS segment 3 is not canonical base64url")
        #expect(verifier.verifyAndDecodeTransaction(altered).error?.reason == .invalidBase64URL)
    }

    @Test(arguments: ["not base64!", "AQID-BA==", "AQIDB", "AQ===", "A=B="])
    func malformedAppReceipt(payload: String) {
        #expect(rejection(Fixtures.submission(["kind": "appReceipt", "payload": payload]))?.reason == .malformedPayload)
    }

    @Test(arguments: ["12a45", "-1", "1.5", String(repeating: "9", count: 33)])
    func malformedTransactionId(payload: String) {
        #expect(rejection(Fixtures.submission(["kind": "transactionId", "payload": payload]))?.reason == .malformedPayload)
    }

    @Test func rejectionCarriesWhatWasKnown() {
        let result = rejection(Fixtures.submission(["userId": "bad\u{0001}"]))
        #expect(result?.subject.submissionId == "sub-1")
        #expect(result?.subject.bundleId == "com.example.game")
        #expect(result?.subject.userId == nil)
    }

    @Test func rejectionsBeforeAFieldIsReachedStillNameTheSubmissionAndUser() {
        let schema = rejection(Fixtures.submission(["schema": "receipt-submitted/v9"]))
        #expect(schema?.reason == .unsupportedSchema)
        #expect(schema?.subject.submissionId == "sub-1" && schema?.subject.userId == "user-1")
        let missing = rejection(Fixtures.submission(["payload": nil]))
        #expect(missing?.reason == .missingField)
        #expect(missing?.subject.userId == "user-1" && missing?.subject.bundleId == "com.example.game")
        let noId = rejection(Fixtures.submission(["submissionId": nil]))
        #expect(noId?.reason == .missingField && noId?.subject.submissionId == nil && noId?.subject.userId == "user-1")
    }

    @Test func anEmptyValueIsNotReportedAsInvalidJSONText() {
        #expect(rejection([])?.detail == "record value is empty (a Kafka null value or zero bytes)")
        #expect(rejection(Array("null".utf8))?.detail.contains("null") == true)
        #expect(rejection(Array("nul".utf8))?.detail == "record value is not valid JSON: invalid literal at byte 0")
    }

    @Test func processReturnsRejectionWithReasonAndSubject() async throws {
        let result = try await stage.process(Fixtures.submission(["kind": "nope"]), context: Fixtures.context())
        guard case .reject(let reason, let detail, let subject) = result else {
            Issue.record("expected reject, got \(result)"); return
        }
        #expect(reason == .unsupportedKind)
        #expect(detail.contains("nope"))
        #expect(subject.submissionId == "sub-1")
    }
}
