import AppStore
import Foundation

/// The receiver's whole judgement of an App Store Server Notifications V2 body: size is the HTTP
/// server's job, shape is this one's, and trust stays with verify (nothing here is verified).
///
/// | rule | code |
/// |---|---|
/// | UTF-8 JSON object | `invalid-json` |
/// | `signedPayload` is a non-empty string | `missing-signed-payload` |
/// | three base64url segments; header and payload decode to JSON objects | `malformed-jws` |
/// | `data.bundleId` or `summary.bundleId` is a string | `missing-bundle-id` |
/// | Apple's bundle id shape, and in `bundleIds` when that is not empty | `invalid-bundle-id` |
///
/// The submission id and key derive from the payload's SHA-256, so Apple re-sending the same
/// body produces the same record; fulfil's ledger makes any repeat one effect.
public struct NotificationIntake: Sendable {
    /// Bundle ids accepted; empty accepts any (verify checks the signed one either way).
    public var bundleIds: Set<String>

    public init(bundleIds: Set<String> = []) {
        self.bundleIds = bundleIds
    }

    /// Checks `body` and builds the submission.
    /// - Parameters:
    ///   - body: The request body.
    ///   - receivedAt: The submission's `submittedAt`.
    /// - Returns: The record to publish, or why the body was refused.
    public func accept(_ body: [UInt8], receivedAt: Date) -> Result<AcceptedNotification, NotificationIntakeError> {
        guard let root = try? JSONParser.parse(body, maxDepth: Self.maxJSONDepth), case .object(let members) = root else {
            return .failure(.init(.invalidJSON, "the body is not a JSON object"))
        }
        guard case .string(let signedPayload)? = members["signedPayload"], !signedPayload.isEmpty else {
            return .failure(.init(.missingSignedPayload, "signedPayload is missing or not a non-empty string"))
        }
        let payload: String
        switch PayloadNormaliser.normalise(signedPayload, kind: .serverNotification, maxTransactionIdDigits: 0) {
        case .success(let normalised): payload = normalised
        case .failure(.empty): return .failure(.init(.missingSignedPayload, "signedPayload is blank"))
        case .failure(.malformed(let detail)): return .failure(.init(.malformedJWS, detail))
        }
        let segment = Array(payload.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)[1])
        guard let claims = PayloadNormaliser.decodeBase64URL(segment),
              case .object(let object)? = try? JSONParser.parse(claims, maxDepth: Self.maxJSONDepth) else {
            return .failure(.init(.malformedJWS, "the JWS payload does not decode to a JSON object"))
        }
        guard let bundleId = Self.bundleId(in: object) else {
            return .failure(.init(.missingBundleId, "neither data.bundleId nor summary.bundleId is a string"))
        }
        guard IngestStage.isValidBundleId(bundleId), bundleId.count <= Self.maxBundleIdLength else {
            return .failure(.init(.invalidBundleId, "the bundle id is not dot-separated letters, digits and -"))
        }
        guard bundleIds.isEmpty || bundleIds.contains(bundleId) else {
            return .failure(.init(.invalidBundleId, "bundle id \(bundleId) is not served by this receiver"))
        }
        let digest = SHA256.hexDigest(payload)
        let submission = ReceiptSubmitted(submissionId: "apple-notification:" + digest, userId: "", bundleId: bundleId,
                                          kind: .serverNotification, payload: payload, submittedAt: receivedAt)
        guard let value = try? ContractCoding.encode(submission) else {
            return .failure(.init(.invalidJSON, "the submission could not be encoded"))
        }
        var uuid: String?
        if case .string(let text)? = object["notificationUUID"] { uuid = String(text.prefix(64)) }
        var signedDate: Date?
        if case .integer(let milliseconds)? = object["signedDate"] {
            signedDate = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        return .success(AcceptedNotification(key: AcceptedNotification.recordKey(bundleId: bundleId, payloadSHA256: digest), value: value, submissionId: submission.submissionId,
                                             bundleId: bundleId, payloadSHA256: digest, notificationUUID: uuid,
                                             signedDate: signedDate))
    }

    /// Apple's bodies and payloads nest a few levels; anything much deeper is not one.
    static let maxJSONDepth = 16

    /// Ingest's limit, so whatever the receiver accepts ingest accepts too.
    private static let maxBundleIdLength = IngestConfiguration().maxBundleIdLength

    private static func bundleId(in claims: JSONObject) -> String? {
        for container in ["data", "summary"] {
            if case .object(let inner)? = claims[container], case .string(let bundleId)? = inner["bundleId"] {
                return bundleId
            }
        }
        return nil
    }
}
