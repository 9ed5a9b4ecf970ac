/// A stable, kebab-case code saying why a record was rejected, dead-lettered or retried.
///
/// Codes are part of the contracts (`receipt-rejected/v1` `reason`, the `receiptd-reason`
/// header, the `error.reason` log key): dashboards and replay tooling filter on them, so a
/// code's meaning never changes. Verifiers may introduce their own codes; the well-known ones
/// are the statics below.
public struct ReasonCode: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a code (verifiers may define their own).
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    public var description: String { rawValue }

    // MARK: ingest
    /// The record exceeds ingest's size limit.
    public static let recordTooLarge: ReasonCode = "record-too-large"
    /// The record value is not valid UTF-8.
    public static let invalidUTF8: ReasonCode = "invalid-utf8"
    /// The record value is not JSON, or not a JSON object.
    public static let invalidJSON: ReasonCode = "invalid-json"
    /// `schema` is missing or names a contract this build does not accept.
    public static let unsupportedSchema: ReasonCode = "unsupported-schema"
    /// A required field is absent, `null` or empty.
    public static let missingField: ReasonCode = "missing-field"
    /// A field has the wrong JSON type or characters outside its allowed set.
    public static let invalidField: ReasonCode = "invalid-field"
    /// A field is longer than its limit.
    public static let fieldTooLong: ReasonCode = "field-too-long"
    /// `submittedAt` is not an RFC 3339 timestamp.
    public static let invalidTimestamp: ReasonCode = "invalid-timestamp"
    /// `kind` is unknown, or known but not (yet) supported by the verifier.
    public static let unsupportedKind: ReasonCode = "unsupported-kind"
    /// The payload does not have the shape its kind requires.
    public static let malformedPayload: ReasonCode = "malformed-payload"

    // MARK: verify
    /// A verifier returned a transaction without the ids the pipeline keys on.
    public static let invalidTransaction: ReasonCode = "invalid-transaction"

    // MARK: fulfil
    /// The product id is not in the catalogue.
    public static let unknownProduct: ReasonCode = "unknown-product"
    /// The catalogue's product type contradicts Apple's transaction `type`.
    public static let productTypeMismatch: ReasonCode = "product-type-mismatch"
    /// The transaction's bundle id differs from the submission's.
    public static let bundleIdMismatch: ReasonCode = "bundle-id-mismatch"
    /// The fulfilment ledger could not answer (its partition's state is not ready); transient.
    public static let ledgerUnavailable: ReasonCode = "ledger-unavailable"
    /// Another user owns the purchase and `fulfil.transferPolicy` is `keep`; the claim carried
    /// nothing new about the purchase.
    public static let purchaseOwnedByAnotherUser: ReasonCode = "purchase-owned-by-another-user"
    /// The transaction's `appAccountToken` does not name the submitting user
    /// (`fulfil.appAccountTokenBinding`).
    public static let appAccountTokenMismatch: ReasonCode = "app-account-token-mismatch"
    /// A Sandbox (or Xcode) purchase on a deployment whose `fulfil.sandboxPolicy` is `reject`.
    public static let sandboxNotAccepted: ReasonCode = "sandbox-not-accepted"
    /// A notification for a purchase with no recorded owner and no usable `appAccountToken`;
    /// transient: it waits through the retry tiers for the app's own submission, then is
    /// dead-lettered with this reason (replay re-drives it).
    public static let ownerUnknown: ReasonCode = "owner-unknown"

    // MARK: runner
    /// The input record could not be decoded as the stage's input contract.
    public static let undecodable: ReasonCode = "undecodable"
    /// Processing did not finish within the per-record timeout.
    public static let timeout: ReasonCode = "timeout"
    /// An error that carried no classification (treated as transient).
    public static let unclassified: ReasonCode = "unclassified-error"
    /// An output could not be encoded (a bug; treated as transient so the record is kept).
    public static let encodingFailed: ReasonCode = "encoding-failed"
}
