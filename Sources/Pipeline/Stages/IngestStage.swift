import AppStore
import Foundation
import Observability

/// Ingest: turns raw `receipt-submitted/v1` bytes into `receipt-ingested/v1`, or a rejection.
///
/// It decodes the bytes itself (its ``Stage/Input`` is `[UInt8]`), so malformed input of any kind
/// becomes a rejection with its own ``ReasonCode`` instead of a crash or a dead letter. Checks, in
/// order (the first failure wins):
///
/// | check | reason |
/// |---|---|
/// | size ≤ ``IngestConfiguration/maxRecordBytes`` | `record-too-large` |
/// | valid UTF-8 | `invalid-utf8` |
/// | a JSON object | `invalid-json` |
/// | `schema` is `receipt-submitted/v1` | `unsupported-schema` |
/// | `submissionId`, `bundleId`, `userId`, `kind`, `submittedAt`, `payload` present, non-null, non-empty (`userId` may be omitted, `null` or empty for `serverNotification`: Apple's notifications name no user) | `missing-field` |
/// | fields are strings, ids use their charsets | `invalid-field` |
/// | fields within their length limits | `field-too-long` |
/// | `kind` is a ``SubmissionKind`` | `unsupported-kind` |
/// | `submittedAt` is RFC 3339, in UTC years 0000–9999 (see ``ContractCoding/date(from:)``) | `invalid-timestamp` |
/// | payload has its kind's shape (see ``PayloadNormaliser``) | `malformed-payload` |
///
/// Never throws: every outcome is a value. Unknown extra fields are ignored (forward compatibility).
public struct IngestStage: Stage {
    public typealias Input = [UInt8]
    public typealias Output = IngestedSubmission
    public static var name: StageName { .ingest }
    public static var waitsOn: StageWaiting { .nothing }

    /// The limits applied.
    public var configuration: IngestConfiguration

    /// Creates the stage.
    public init(configuration: IngestConfiguration = IngestConfiguration()) {
        self.configuration = configuration
    }

    public func process(_ input: [UInt8], context: StageContext) async throws -> StageResult<IngestedSubmission> {
        switch ingest(input, now: context.now) {
        case .success(let submission):
            return .emit([submission])
        case .failure(let rejection):
            context.logger.debug("submission refused by ingest checks", metadata: [
                LoggingKeys.reason: .string(rejection.reason.rawValue),
                LoggingKeys.submissionId: .string(rejection.subject.submissionId ?? ""),
            ])
            return .reject(reason: rejection.reason, detail: rejection.detail, subject: rejection.subject)
        }
    }

    /// The synchronous core of ``process(_:context:)``: validates and normalises one record value.
    /// - Parameters:
    ///   - bytes: the raw record value.
    ///   - now: becomes `ingestedAt`.
    public func ingest(_ bytes: [UInt8], now: Date) -> Result<IngestedSubmission, Rejection> {
        do {
            return .success(try validate(bytes, now: now))
        } catch let rejection as Rejection {
            return .failure(rejection)
        } catch {
            return .failure(Rejection(reason: .invalidJSON, detail: "unexpected: \(error)"))
        }
    }

    private func validate(_ bytes: [UInt8], now: Date) throws -> IngestedSubmission {
        guard bytes.count <= configuration.maxRecordBytes else {
            throw Rejection(reason: .recordTooLarge,
                                  detail: "record is \(bytes.count) bytes, at most \(configuration.maxRecordBytes) allowed")
        }
        guard Self.isValidUTF8(bytes) else {
            throw Rejection(reason: .invalidUTF8, detail: "record value is not valid UTF-8")
        }
        guard !bytes.isEmpty else {
            throw Rejection(reason: .invalidJSON, detail: "record value is empty (a Kafka null value or zero bytes)")
        }
        // Read over a tape (no tree of values; only the members read become values).
        let read: Result<JSONMembers, JSONMembers.NotAnObject>
        do {
            read = try JSONMembers.read(bytes, maxDepth: Self.maxJSONDepth)
        } catch {
            throw Rejection(reason: .invalidJSON, detail: "record value is not valid JSON: \(error.detail)")
        }
        let object: JSONMembers
        switch read {
        case .success(let members): object = members
        case .failure(let other):
            throw Rejection(reason: .invalidJSON, detail: "record value is a JSON \(other.value.typeName), not an object")
        }
        var fields = FieldReader(object: object, configuration: configuration)

        guard case .string(let schema)? = object["schema"], schema == ReceiptSubmitted.schema else {
            let found = object["schema"].map { value -> String in
                if case .string(let s) = value { return "\"\(s.prefix(64))\"" }
                return value.typeName
            } ?? "nothing"
            throw fields.rejection(.unsupportedSchema, "schema must be \"\(ReceiptSubmitted.schema)\", found \(found)")
        }

        let submissionId = try fields.string("submissionId")
        guard submissionId.count <= configuration.maxSubmissionIdLength else {
            throw fields.rejection(.fieldTooLong, "submissionId is longer than \(configuration.maxSubmissionIdLength) characters")
        }
        guard submissionId.utf8.allSatisfy(Self.isSubmissionIdByte) else {
            throw fields.rejection(.invalidField, "submissionId may only contain A-Z a-z 0-9 . _ : -")
        }
        fields.subject.submissionId = submissionId

        let bundleId = try fields.string("bundleId")
        guard bundleId.count <= configuration.maxBundleIdLength else {
            throw fields.rejection(.fieldTooLong, "bundleId is longer than \(configuration.maxBundleIdLength) characters")
        }
        guard Self.isValidBundleId(bundleId) else {
            throw fields.rejection(.invalidField, "bundleId must be dot-separated segments of A-Z a-z 0-9 -")
        }
        fields.subject.bundleId = bundleId

        let userId = try fields.optionalString("userId") ?? ""
        guard userId.utf8.count <= configuration.maxUserIdBytes else {
            throw fields.rejection(.fieldTooLong, "userId is longer than \(configuration.maxUserIdBytes) UTF-8 bytes")
        }
        guard !userId.unicodeScalars.contains(where: Self.isControl) else {
            throw fields.rejection(.invalidField, "userId contains control characters")
        }
        fields.subject.userId = userId.isEmpty ? nil : userId

        let rawKind = try fields.string("kind")
        fields.subject.kind = String(rawKind.prefix(64))
        guard let kind = SubmissionKind(rawValue: rawKind) else {
            throw fields.rejection(.unsupportedKind, "kind \"\(rawKind.prefix(64))\" is not one of "
                + SubmissionKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard !userId.isEmpty || kind == .serverNotification else {
            throw fields.rejection(.missingField, "userId is missing (only serverNotification submissions may omit it)")
        }

        let submittedAtText = try fields.string("submittedAt")
        guard let submittedAt = ContractCoding.date(from: submittedAtText) else {
            throw fields.rejection(.invalidTimestamp, "submittedAt is not an RFC 3339 timestamp")
        }

        let rawPayload = try fields.string("payload")
        switch PayloadNormaliser.normalise(rawPayload, kind: kind,
                                           maxTransactionIdDigits: configuration.maxTransactionIdDigits) {
        case .success(let payload):
            return IngestedSubmission(submissionId: submissionId, bundleId: bundleId, userId: userId, kind: kind,
                                      payload: payload, submittedAt: submittedAt, ingestedAt: now)
        case .failure(.empty):
            throw fields.rejection(.missingField, "payload is empty")
        case .failure(.malformed(let detail)):
            fields.subject.payloadSHA256 = SHA256.hexDigest(rawPayload)
            throw fields.rejection(.malformedPayload, detail)
        }
    }

    /// A submission is a flat object; anything deeper than this is not one.
    static let maxJSONDepth = 16

    /// Whether `bytes` are UTF-8. ASCII (every JWS, id and timestamp) is recognised eight bytes at a
    /// time, then byte by byte, without building a string; only from the first other byte on is
    /// the rest decoded (the standard library's validation is generic, and unspecialized it looks
    /// up type metadata on every call).
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return true }
            var index = 0
            while buffer.count &- index >= 8,
                  UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index &+= 8
            }
            while index < buffer.count, buffer[index] < 0x80 { index &+= 1 }
            guard index < buffer.count else { return true }
            // Everything before `index` is ASCII, so decoding can start there.
            return String(validating: UnsafeBufferPointer(rebasing: buffer[index...]), as: UTF8.self) != nil
        }
    }

    /// What a rejection can report before the fields are checked in order: each id that already
    /// passes its own check below, so a record rejected for its schema or a later field still
    /// names its submission and user. Built only for a rejection.
    fileprivate static func knownSubject(_ object: JSONMembers, configuration: IngestConfiguration) -> SubmissionSubject {
        var subject = SubmissionSubject()
        if case .string(let id)? = object["submissionId"], !id.isEmpty, id.count <= configuration.maxSubmissionIdLength,
           id.utf8.allSatisfy(isSubmissionIdByte) {
            subject.submissionId = id
        }
        if case .string(let bundleId)? = object["bundleId"], bundleId.count <= configuration.maxBundleIdLength,
           isValidBundleId(bundleId) {
            subject.bundleId = bundleId
        }
        if case .string(let userId)? = object["userId"], !PayloadNormaliser.trimASCIIWhitespace(userId).isEmpty,
           userId.utf8.count <= configuration.maxUserIdBytes, !userId.unicodeScalars.contains(where: isControl) {
            subject.userId = userId
        }
        return subject
    }

    static func isSubmissionIdByte(_ byte: UInt8) -> Bool {
        PayloadNormaliser.isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
    }

    /// Apple's bundle id shape: dot-separated, non-empty segments of ASCII letters, digits and `-`.
    /// In particular it never contains `/`, which makes the ``OwnerKey`` encoding unambiguous.
    static func isValidBundleId(_ bundleId: String) -> Bool {
        var segmentLength = 0
        for byte in bundleId.utf8 {
            if byte == UInt8(ascii: ".") {
                guard segmentLength > 0 else { return false }
                segmentLength = 0
            } else {
                guard PayloadNormaliser.isAlphanumeric(byte) || byte == UInt8(ascii: "-") else { return false }
                segmentLength += 1
            }
        }
        return segmentLength > 0
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value <= 0x9F)
    }
}

/// Reads required string fields of a submission, building up the subject as it goes.
private struct FieldReader {
    let object: JSONMembers
    let configuration: IngestConfiguration
    var subject = SubmissionSubject()

    /// A rejection naming what is known: the fields checked so far, and the ids that pass their
    /// own checks although an earlier field failed (``IngestStage/knownSubject(_:configuration:)``).
    func rejection(_ reason: ReasonCode, _ detail: String) -> Rejection {
        let known = IngestStage.knownSubject(object, configuration: configuration)
        var reported = subject
        reported.submissionId = subject.submissionId ?? known.submissionId
        reported.bundleId = subject.bundleId ?? known.bundleId
        reported.userId = subject.userId ?? known.userId
        return Rejection(reason: reason, detail: detail, subject: reported)
    }

    /// A string field that may be absent, `null` or blank (nil then).
    func optionalString(_ name: String) throws -> String? {
        switch object[name] {
        case nil, .null?: return nil
        case .string(let value)?: return PayloadNormaliser.trimASCIIWhitespace(value).isEmpty ? nil : value
        case let other?: throw rejection(.invalidField, "\(name) must be a string, found \(other.typeName)")
        }
    }

    /// A present, non-null, non-empty string field.
    func string(_ name: String) throws -> String {
        switch object[name] {
        case nil, .null?:
            throw rejection(.missingField, "\(name) is missing")
        case .string(let value)?:
            guard !PayloadNormaliser.trimASCIIWhitespace(value).isEmpty else {
                throw rejection(.missingField, "\(name) is empty")
            }
            return value
        case let other?:
            throw rejection(.invalidField, "\(name) must be a string, found \(other.typeName)")
        }
    }
}
