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
}
