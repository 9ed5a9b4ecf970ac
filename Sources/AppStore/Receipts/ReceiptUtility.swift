/// Reads transaction identifiers out of a StoreKit 1 app receipt **without verifying it**, for
/// the App Store Server API path (Apple's `ReceiptUtility`): the ids only select what to ask
/// Apple for, and trust comes from the signed API response, never from the receipt.
///
/// Parsing is the same as ``AppReceiptVerifier``'s (OpenSSL for the PKCS#7 envelope, the bounded
/// DER walker for the payload), so malformed input fails the same way, with a reason code; the
/// signature and certificates are not looked at.
public enum ReceiptUtility {
    /// Every in-app purchase's transaction id, in receipt order (the original transaction id
    /// when a purchase has no transaction id).
    /// - Parameters:
    ///   - appReceipt: The receipt as canonical standard base64.
    ///   - limits: Size bounds; default ``AppReceiptVerifierConfiguration/Limits/init(maxReceiptBytes:maxCertificates:chainCacheCapacity:rejectedChainCacheCapacity:)``.
    /// - Returns: The ids; empty when the receipt holds no in-app purchases.
    /// - Throws: ``VerificationError`` `too-large`, `invalid-base64`, `invalid-receipt`,
    ///   `invalid-field`, `invalid-date`.
    public static func extractTransactionIds(appReceipt: String,
                                             limits: AppReceiptVerifierConfiguration.Limits = .init()) throws(VerificationError) -> [String] {
        let der = try AppReceiptVerifierCore.decode(appReceipt, limits: limits)
        // The certificates are not needed here: skip OpenSSL's costly certificate parsing when the
        // envelope is DER (BER receipts, e.g. Xcode's, are parsed whole).
        let envelope = try PKCS7Container(der: PKCS7Layout(der: der)?.withoutCertificates ?? der,
                                          maxCertificates: limits.maxCertificates)
        let receipt = try ReceiptPayloadParser.parse(envelope.content)
        return receipt.inAppPurchases.compactMap { $0.transactionId ?? $0.originalTransactionId }
    }

    /// The first in-app purchase's transaction id, like Apple's `extractTransactionId(appReceipt:)`.
    /// - Parameter appReceipt: The receipt as canonical standard base64.
    /// - Returns: The id, or `nil` when the receipt is malformed or holds no in-app purchases.
    public static func extractTransactionId(appReceipt: String) -> String? {
        (try? extractTransactionIds(appReceipt: appReceipt))?.first
    }
}
