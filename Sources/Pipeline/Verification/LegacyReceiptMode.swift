/// How the verify stage turns a StoreKit 1 `appReceipt` into transactions.
public enum LegacyReceiptMode: String, Sendable, CaseIterable {
    /// Verify the PKCS#7 receipt locally (signature, chain to Apple Inc. Root at the receipt's
    /// creation date, bundle id) and take its in-app purchases. No network, no credentials; it
    /// knows what the receipt knew when the device fetched it.
    case local
    /// Send it to Apple's legacy `verifyReceipt` endpoint (production first, 21007 -> sandbox,
    /// 21008 -> production) and take `latest_receipt_info` (current renewals, refunds).
    case verifyReceipt
    /// Verify it locally, then ask the App Store Server API for the customer's transaction
    /// history by the receipt's transaction id, each signed transaction verified like any JWS.
    case serverAPI
}
