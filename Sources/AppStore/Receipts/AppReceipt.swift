import Foundation

/// A decoded StoreKit 1 app receipt: the attribute SET signed inside the PKCS#7 container.
///
/// Returned by ``AppReceiptVerifier/verifyAndDecodeAppReceipt(_:)`` only after the signature and
/// the chain to a trust anchor verified. Documented attributes are typed (strings, `Date?`,
/// integers); everything else is kept raw in ``otherAttributes`` so future Apple additions never
/// break decoding. Enum-like values follow the raw + typed pattern (``rawReceiptType`` /
/// ``receiptType``).
///
/// Attribute types: 0 receipt type, 2 bundle id, 3 app version, 4 opaque value, 5 SHA-1 hash,
/// 12 creation date, 17 in-app purchase (repeated), 18 original purchase date, 19 original
/// application version, 21 expiration date. Types 4 and 5 are only useful on the device (the hash
/// covers the device identifier), so a server cannot check them.
public struct AppReceipt: Sendable, Hashable {
    /// Attribute 0 as signed, e.g. `ProductionSandbox`.
    public var rawReceiptType: String?
    /// Attribute 2, `CFBundleIdentifier` (compare exactly: real bundle ids differ in case only).
    public var bundleId: String?
    /// Attribute 2's raw value (the DER UTF8String), the input of the device's SHA-1 check.
    public var bundleIdData: [UInt8]?
    /// Attribute 3, `CFBundleVersion` (iOS) or `CFBundleShortVersionString` (macOS).
    public var applicationVersion: String?
    /// Attribute 4, the opaque value of the device hash.
    public var opaqueValue: [UInt8]?
    /// Attribute 5, the SHA-1 device hash (20 bytes on App Store receipts).
    public var sha1Hash: [UInt8]?
    /// Attribute 12, when the receipt was created; the instant the chain is validated at.
    public var receiptCreationDate: Date?
    /// Attribute 18, when the app was first purchased.
    public var originalPurchaseDate: Date?
    /// Attribute 19, the app version first purchased (`1.0` in the sandbox).
    public var originalApplicationVersion: String?
    /// Attribute 21, when a Volume Purchase Program receipt expires (absent otherwise).
    public var expirationDate: Date?
    /// Attribute 17, one entry per in-app purchase, in receipt order (may be empty).
    public var inAppPurchases: [InAppPurchaseReceipt]
    /// Every other attribute, raw and in receipt order (1, 6–11, 13–16, 20, 25, … today).
    public var otherAttributes: [ReceiptAttribute]

    /// Creates an empty receipt (every attribute absent).
    public init() {
        inAppPurchases = []
        otherAttributes = []
    }

    /// The typed receipt type, `nil` when absent or unknown.
    public var receiptType: AppReceiptType? { rawReceiptType.flatMap(AppReceiptType.init(rawValue:)) }

    /// The environment implied by the receipt type, `nil` when absent or unknown.
    public var environment: AppStoreEnvironment? { receiptType?.environment }

    /// The raw attributes of one type that the model does not name.
    /// - Parameter type: An attribute type, e.g. `1` (app item id on Production receipts).
    public func otherAttributes(ofType type: Int64) -> [ReceiptAttribute] {
        otherAttributes.filter { $0.type == type }
    }
}
