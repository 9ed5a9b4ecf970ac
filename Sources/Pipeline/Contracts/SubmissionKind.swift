/// What a submission's `payload` holds, i.e. how it must be verified.
///
/// The raw values are the `kind` strings of the `receipt-submitted/v1` contract.
public enum SubmissionKind: String, Sendable, Codable, CaseIterable, Hashable {
    /// A `signedTransaction` JWS from StoreKit 2 (`Transaction.jwsRepresentation`).
    case signedTransaction
    /// A `signedRenewalInfo` JWS (subscription renewal state).
    case signedRenewalInfo
    /// The `signedPayload` JWS of an App Store Server Notification v2.
    case serverNotification
    /// A legacy base64 app receipt (`appStoreReceiptURL` contents).
    case appReceipt
    /// A bare transaction id, to be looked up through the App Store Server API.
    case transactionId

    /// Whether the payload is a compact JWS (three base64url segments).
    public var isJWS: Bool {
        switch self {
        case .signedTransaction, .signedRenewalInfo, .serverNotification: true
        case .appReceipt, .transactionId: false
        }
    }

    // Compared and hashed by case: `RawRepresentable`'s defaults, which the compiler picks over
    // synthesized ones, build and hash the raw `String`, and the verify stage asks twice per record
    // whether its verifier supports the kind (a `Set` lookup).
    public static func == (lhs: SubmissionKind, rhs: SubmissionKind) -> Bool { lhs.ordinal == rhs.ordinal }

    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }

    private var ordinal: UInt8 {
        switch self {
        case .signedTransaction: 0
        case .signedRenewalInfo: 1
        case .serverNotification: 2
        case .appReceipt: 3
        case .transactionId: 4
        }
    }
}
