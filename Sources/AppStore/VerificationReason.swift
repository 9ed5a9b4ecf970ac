/// Why a signed App Store payload (StoreKit 2 JWS or StoreKit 1 app receipt) was rejected, as a
/// stable machine-readable code.
///
/// The ``code`` strings are part of the public contract (logs, metrics labels, rejection records)
/// and never change meaning. Every reason produced by the offline verifier is final: retrying the
/// same input gives the same answer (see ``VerificationError/isRetryable``).
///
/// | code | when |
/// |---|---|
/// | `malformed-jws` | not three non-empty `.`-separated segments (compact JWS) |
/// | `too-large` | the JWS, its header segment or its payload segment, or a receipt's base64, exceeds the configured limit |
/// | `invalid-base64url` | a segment is not canonical unpadded base64url (padding, `+`/`/`, whitespace, bad length, non-zero trailing bits) |
/// | `invalid-json` | header or payload is not strict RFC 8259 JSON (also: not an object, invalid UTF-8, lone surrogates, trailing data) |
/// | `duplicate-json-member` | an object repeats a member name (compared after unescaping) |
/// | `json-too-deep` | objects/arrays nest deeper than the configured limit |
/// | `unsupported-algorithm` | header `alg` is missing or not exactly `ES256` (`none`, `HS256`, `RS256`, `es256`, …) |
/// | `forbidden-header` | header carries `jwk`, `jku`, `x5u`, `crit`, `b64`, `zip` or `enc` |
/// | `missing-x5c` | header has no `x5c`, or an empty one |
/// | `invalid-chain-length` | `x5c` does not hold exactly three certificates |
/// | `invalid-certificate` | an `x5c` entry is not a string of canonical padded base64 of one DER certificate, or the leaf key is not P-256 |
/// | `untrusted-root` | `x5c[2]` is not byte-for-byte one of the configured trust anchors; for a receipt, no path from the signer leads to a configured anchor (e.g. Xcode's self-signed StoreKit certificate) |
/// | `missing-apple-oid` | intermediate lacks `1.2.840.113635.100.6.2.1` or leaf lacks `1.2.840.113635.100.6.11.1` (JWS and receipts) |
/// | `invalid-chain` | the chain does not verify (signatures, issuer names, CA constraints, strict X.509 profile), or a receipt's verified path is not leaf <- intermediate <- anchor |
/// | `certificate-expired` | a chain certificate's `notAfter` lies before the effective date (`signedDate`, a receipt's creation date, or now) |
/// | `certificate-not-yet-valid` | a chain certificate's `notBefore` lies after the effective date |
/// | `invalid-signature-format` | the signature segment does not decode to exactly 64 bytes `r‖s` (e.g. DER-encoded) |
/// | `invalid-signature` | the ES256 signature does not verify with the leaf key |
/// | `invalid-base64` | an app receipt is not canonical padded standard base64 (whitespace, `-`/`_`, missing padding, non-zero trailing bits) |
/// | `invalid-receipt` | an app receipt is not one PKCS#7 SignedData with embedded `id-data` content, exactly one signer whose certificate is embedded, and a well-formed DER attribute SET (lengths, depth, duplicates, trailing bytes) |
/// | `receipt-signature-invalid` | the receipt's PKCS#7 signature does not verify with the signer certificate, or uses a digest other than SHA-1/SHA-2 |
/// | `invalid-date` | a date field is not an integer number of milliseconds inside the configured range; a receipt date is not RFC 3339 |
/// | `missing-field` | a required payload field is absent or `null` (receipts: bundle id) |
/// | `invalid-field` | a payload field has the wrong JSON type or is out of range; a receipt attribute has the wrong ASN.1 type |
/// | `bundle-id-mismatch` | the payload's `bundleId` is not in the configured set (exact, case-sensitive) |
/// | `environment-mismatch` | the payload's `environment` (a receipt's type, attribute 0) is not accepted by the configured policy |
/// | `app-apple-id-mismatch` | Production payload whose `appAppleId` differs from the configured one (notifications, app transactions; never transactions) |
/// | `nested-mismatch` | a notification's nested transaction or renewal info does not belong to it (other `bundleId` or `environment` than `data`, or the two disagree on `originalTransactionId`) |
/// | `retryable-verification-failure` | reserved for online checks (OCSP, network); never produced offline |
public struct VerificationReason: Sendable, Hashable, CustomStringConvertible {
    private enum Backing: String, Sendable, Hashable {
        case malformedJWS = "malformed-jws"
        case tooLarge = "too-large"
        case invalidBase64URL = "invalid-base64url"
        case invalidJSON = "invalid-json"
        case duplicateJSONMember = "duplicate-json-member"
        case jsonTooDeep = "json-too-deep"
        case unsupportedAlgorithm = "unsupported-algorithm"
        case forbiddenHeader = "forbidden-header"
        case missingX5C = "missing-x5c"
        case invalidChainLength = "invalid-chain-length"
        case invalidCertificate = "invalid-certificate"
        case untrustedRoot = "untrusted-root"
        case missingAppleOID = "missing-apple-oid"
        case invalidChain = "invalid-chain"
        case certificateExpired = "certificate-expired"
        case certificateNotYetValid = "certificate-not-yet-valid"
        case invalidSignatureFormat = "invalid-signature-format"
        case invalidSignature = "invalid-signature"
        case invalidBase64 = "invalid-base64"
        case invalidReceipt = "invalid-receipt"
        case receiptSignatureInvalid = "receipt-signature-invalid"
        case invalidDate = "invalid-date"
        case missingField = "missing-field"
        case invalidField = "invalid-field"
        case bundleIdMismatch = "bundle-id-mismatch"
        case environmentMismatch = "environment-mismatch"
        case appAppleIdMismatch = "app-apple-id-mismatch"
        case nestedMismatch = "nested-mismatch"
        case retryableVerificationFailure = "retryable-verification-failure"
    }

    private let backing: Backing

    private init(_ backing: Backing) {
        self.backing = backing
    }

    /// The stable kebab-case code, e.g. `untrusted-root`.
    public var code: String { backing.rawValue }

    /// The code, so that string interpolation prints it.
    public var description: String { backing.rawValue }

    /// Whether retrying the same input later may succeed. Only
    /// ``retryableVerificationFailure`` is retryable.
    public var isRetryable: Bool { backing == .retryableVerificationFailure }

    /// The reason for a code string, or `nil` for an unknown code.
    /// - Parameter code: A code as returned by ``code``.
    public init?(code: String) {
        guard let backing = Backing(rawValue: code) else { return nil }
        self.backing = backing
    }

    /// `malformed-jws`: not a three-segment compact JWS.
    public static let malformedJWS = VerificationReason(.malformedJWS)
    /// `too-large`: a size limit was exceeded.
    public static let tooLarge = VerificationReason(.tooLarge)
    /// `invalid-base64url`: a segment is not canonical base64url.
    public static let invalidBase64URL = VerificationReason(.invalidBase64URL)
    /// `invalid-json`: header or payload is not strict JSON.
    public static let invalidJSON = VerificationReason(.invalidJSON)
    /// `duplicate-json-member`: an object repeats a member name.
    public static let duplicateJSONMember = VerificationReason(.duplicateJSONMember)
    /// `json-too-deep`: nesting exceeds the configured depth.
    public static let jsonTooDeep = VerificationReason(.jsonTooDeep)
    /// `unsupported-algorithm`: `alg` is not `ES256`.
    public static let unsupportedAlgorithm = VerificationReason(.unsupportedAlgorithm)
    /// `forbidden-header`: a header member that could redirect key selection or change processing.
    public static let forbiddenHeader = VerificationReason(.forbiddenHeader)
    /// `missing-x5c`: no certificate chain in the header.
    public static let missingX5C = VerificationReason(.missingX5C)
    /// `invalid-chain-length`: `x5c` does not have exactly three entries.
    public static let invalidChainLength = VerificationReason(.invalidChainLength)
    /// `invalid-certificate`: an `x5c` entry cannot be decoded as a certificate.
    public static let invalidCertificate = VerificationReason(.invalidCertificate)
    /// `untrusted-root`: the chain's root is not a configured trust anchor.
    public static let untrustedRoot = VerificationReason(.untrustedRoot)
    /// `missing-apple-oid`: a required Apple marker extension is absent.
    public static let missingAppleOID = VerificationReason(.missingAppleOID)
    /// `invalid-chain`: chain signatures or constraints do not verify.
    public static let invalidChain = VerificationReason(.invalidChain)
    /// `certificate-expired`: a certificate expired before the effective date.
    public static let certificateExpired = VerificationReason(.certificateExpired)
    /// `certificate-not-yet-valid`: a certificate starts after the effective date.
    public static let certificateNotYetValid = VerificationReason(.certificateNotYetValid)
    /// `invalid-signature-format`: the signature is not 64 bytes `r‖s`.
    public static let invalidSignatureFormat = VerificationReason(.invalidSignatureFormat)
    /// `invalid-signature`: the ES256 signature does not verify.
    public static let invalidSignature = VerificationReason(.invalidSignature)
    /// `invalid-base64`: an app receipt is not canonical standard base64.
    public static let invalidBase64 = VerificationReason(.invalidBase64)
    /// `invalid-receipt`: an app receipt is not a well-formed single-signer PKCS#7 receipt.
    public static let invalidReceipt = VerificationReason(.invalidReceipt)
    /// `receipt-signature-invalid`: the receipt's PKCS#7 signature does not verify.
    public static let receiptSignatureInvalid = VerificationReason(.receiptSignatureInvalid)
    /// `invalid-date`: a date is not integer milliseconds in range.
    public static let invalidDate = VerificationReason(.invalidDate)
    /// `missing-field`: a required payload field is absent.
    public static let missingField = VerificationReason(.missingField)
    /// `invalid-field`: a payload field has the wrong type or range.
    public static let invalidField = VerificationReason(.invalidField)
    /// `bundle-id-mismatch`: the bundle identifier is not configured.
    public static let bundleIdMismatch = VerificationReason(.bundleIdMismatch)
    /// `environment-mismatch`: the environment is not accepted.
    public static let environmentMismatch = VerificationReason(.environmentMismatch)
    /// `app-apple-id-mismatch`: the App Store app id differs (Production only).
    public static let appAppleIdMismatch = VerificationReason(.appAppleIdMismatch)
    /// `nested-mismatch`: a notification's nested JWS belongs to another app, environment or subscription.
    public static let nestedMismatch = VerificationReason(.nestedMismatch)
    /// `retryable-verification-failure`: a transient online failure (never produced offline).
    public static let retryableVerificationFailure = VerificationReason(.retryableVerificationFailure)

    /// Every reason, in table order.
    public static let allReasons: [VerificationReason] = [
        .malformedJWS, .tooLarge, .invalidBase64URL, .invalidJSON, .duplicateJSONMember, .jsonTooDeep,
        .unsupportedAlgorithm, .forbiddenHeader, .missingX5C, .invalidChainLength, .invalidCertificate,
        .untrustedRoot, .missingAppleOID, .invalidChain, .certificateExpired, .certificateNotYetValid,
        .invalidSignatureFormat, .invalidSignature, .invalidBase64, .invalidReceipt, .receiptSignatureInvalid,
        .invalidDate, .missingField, .invalidField,
        .bundleIdMismatch, .environmentMismatch, .appAppleIdMismatch, .nestedMismatch, .retryableVerificationFailure,
    ]
}
