/// The stages of the pipeline; the raw value is used in metrics labels, logs, headers and
/// contracts (`stage` fields).
public enum StageName: String, Sendable, Codable, CaseIterable, Hashable, CustomStringConvertible {
    /// Structural validation and normalisation of raw submissions.
    case ingest
    /// Cryptographic verification; one output per transaction.
    case verify
    /// Catalogue rules, de-duplication, entitlement changes.
    case fulfil
    /// Folds fulfil's owner updates into the per-owner view (part of fulfil's deployment).
    case owners
    /// Sends the backend's answers to Apple's refund consumption requests (`receiptd consumption`).
    case consumption

    /// The stages every submission flows through (what `receiptd dev`, the demo and the chaos run
    /// start); `consumption` runs only where the App Store Server API is configured.
    public static let receiptStages: [StageName] = [.ingest, .verify, .fulfil, .owners]

    public var description: String { rawValue }
}
