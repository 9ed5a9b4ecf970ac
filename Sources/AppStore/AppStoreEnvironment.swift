/// The environment a StoreKit payload was signed for (`environment` claim).
///
/// Models keep the raw string (`rawEnvironment`) and expose this typed view, so unknown future
/// values never break decoding; they are rejected by the environment policy instead.
public enum AppStoreEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    /// `Production`: real purchases.
    case production = "Production"
    /// `Sandbox`: TestFlight and sandbox accounts.
    case sandbox = "Sandbox"
    /// `Xcode`: StoreKit Testing in Xcode (locally signed; never accepted unless explicitly allowed).
    case xcode = "Xcode"
    /// `LocalTesting`: local test signing (never accepted unless explicitly allowed).
    case localTesting = "LocalTesting"
}
