/// The choices a deployment makes about entitlements, validated at start-up (`fulfil.*` keys).
public struct FulfilmentPolicy: Sendable, Equatable {
    /// What happens when a second user submits a purchase someone else owns.
    public enum TransferPolicy: String, Sendable, CaseIterable {
        /// The purchase stays with its first owner; the claim is rejected `purchase-owned-by-another-user`
        /// (news of the purchase it carries, a renewal or refund, still updates the owner).
        case keep
        /// The purchase moves: a `transferOut` event revokes the previous owner, a `transferIn`
        /// grants the new one.
        case transfer
    }

    /// How an `appAccountToken` must relate to the submitting user.
    public enum AppAccountTokenBinding: String, Sendable, CaseIterable {
        /// The token is not checked and never names an owner.
        case off
        /// The app sets the token to the user id (a UUID): a submission whose user differs is
        /// rejected `app-account-token-mismatch`, and a notification for an unknown purchase is
        /// applied to the user the token names.
        case userIdIsToken
    }

    /// What Sandbox (and Xcode/local-testing) purchases do.
    public enum SandboxPolicy: String, Sendable, CaseIterable {
        /// Treated like production purchases (App Review buys in Sandbox against production backends).
        case grant
        /// Recorded and published with their environment, but without access (`accessWithheld: sandbox`).
        case tag
        /// Rejected `sandbox-not-accepted`.
        case reject
    }

    public var transfer: TransferPolicy
    public var appAccountToken: AppAccountTokenBinding
    public var sandbox: SandboxPolicy
    /// Whether a subscription in billing retry (no grace period) keeps access.
    public var billingRetryAccess: Bool

    public init(transfer: TransferPolicy = .keep, appAccountToken: AppAccountTokenBinding = .off,
                sandbox: SandboxPolicy = .grant, billingRetryAccess: Bool = false) {
        self.transfer = transfer
        self.appAccountToken = appAccountToken
        self.sandbox = sandbox
        self.billingRetryAccess = billingRetryAccess
    }

    /// Parses the configuration strings.
    /// - Throws: ``PipelineConfigurationError`` naming the key and the allowed values.
    public init(transfer: String, appAccountToken: String, sandbox: String, billingRetryAccess: Bool) throws {
        func parse<T: RawRepresentable & CaseIterable>(_ value: String, key: String, as: T.Type) throws -> T where T.RawValue == String {
            guard let parsed = T(rawValue: value) else {
                throw PipelineConfigurationError("fulfil.\(key): \"\(value)\" is not one of "
                    + T.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return parsed
        }
        self.init(transfer: try parse(transfer, key: "transferPolicy", as: TransferPolicy.self),
                  appAccountToken: try parse(appAccountToken, key: "appAccountTokenBinding", as: AppAccountTokenBinding.self),
                  sandbox: try parse(sandbox, key: "sandboxPolicy", as: SandboxPolicy.self),
                  billingRetryAccess: billingRetryAccess)
    }

    /// Whether Apple's raw environment is a non-production one the sandbox policy applies to.
    static func isSandbox(_ environment: String) -> Bool {
        environment != "Production"
    }
}
