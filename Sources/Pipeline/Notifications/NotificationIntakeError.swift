/// Why the notification receiver refused a request body (answered `400` with the code), so
/// whoever reads the response or the log sees which rule failed without seeing the payload.
public struct NotificationIntakeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule that failed, as a stable reason code.
    public enum Code: String, Sendable, CaseIterable {
        /// The body is not a UTF-8 JSON object.
        case invalidJSON = "invalid-json"
        /// The object has no non-empty string member `signedPayload`.
        case missingSignedPayload = "missing-signed-payload"
        /// `signedPayload` is not three base64url segments whose header and payload are JSON objects.
        case malformedJWS = "malformed-jws"
        /// The (unverified) payload names no bundle id in `data` or `summary`.
        case missingBundleId = "missing-bundle-id"
        /// The bundle id is not Apple's shape, or not one this receiver accepts.
        case invalidBundleId = "invalid-bundle-id"
    }

    /// The failed rule.
    public var code: Code
    /// A bounded description that never contains the payload.
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
