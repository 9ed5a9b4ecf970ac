/// The kind of an app receipt (attribute 0), kept raw in ``AppReceipt/rawReceiptType`` with this
/// typed view on top, so an unknown future value never breaks decoding.
public enum AppReceiptType: String, Sendable, Hashable, CaseIterable, Codable {
    /// `Production`: a purchase in the App Store.
    case production = "Production"
    /// `ProductionSandbox`: TestFlight or a sandbox account.
    case productionSandbox = "ProductionSandbox"
    /// `ProductionVPP`: a Volume Purchase Program copy (may carry an expiration date).
    case productionVPP = "ProductionVPP"
    /// `ProductionVPPSandbox`: a Volume Purchase Program copy in the sandbox.
    case productionVPPSandbox = "ProductionVPPSandbox"
    /// `Xcode`: StoreKit testing in Xcode, signed locally by a self-signed certificate.
    case xcode = "Xcode"

    /// The App Store environment this receipt type belongs to (VPP copies map to their store).
    public var environment: AppStoreEnvironment {
        switch self {
        case .production, .productionVPP: .production
        case .productionSandbox, .productionVPPSandbox: .sandbox
        case .xcode: .xcode
        }
    }
}
