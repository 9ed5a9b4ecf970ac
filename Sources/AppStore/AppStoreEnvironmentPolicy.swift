/// Which App Store environments a ``SignedDataVerifier`` accepts.
///
/// `Xcode` and `LocalTesting` payloads are never accepted by a policy; list them in
/// ``SignedDataVerifierConfiguration/allowedTestEnvironments`` to accept them explicitly.
public enum AppStoreEnvironmentPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// Only `Production`.
    case production
    /// Only `Sandbox`.
    case sandbox
    /// `Production` or `Sandbox`.
    case any

    /// Whether the policy accepts an environment (test environments are never accepted here).
    /// - Parameter environment: The typed environment of a payload.
    public func accepts(_ environment: AppStoreEnvironment) -> Bool {
        switch (self, environment) {
        case (.production, .production), (.sandbox, .sandbox), (.any, .production), (.any, .sandbox): true
        default: false
        }
    }
}
