import HTTP

/// The App Store Server API endpoints receiptd calls, each with its own request budget: Apple
/// limits requests per app and endpoint, so budgets and pauses are kept per endpoint.
public enum AppStoreEndpoint: String, Sendable, CaseIterable, Codable {
    case transactionInfo
    case transactionHistory
    case subscriptionStatuses
    case notificationHistory
    case consumptionInformation

    /// The endpoint a request path (relative to the base URL, query allowed) belongs to.
    init?(method: HTTPMethod, path: String) {
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        switch (method, route) {
        case (.get, let p) where p.hasPrefix("/inApps/v1/transactions/"): self = .transactionInfo
        case (.get, let p) where p.hasPrefix("/inApps/v2/history/"): self = .transactionHistory
        case (.get, let p) where p.hasPrefix("/inApps/v1/subscriptions/"): self = .subscriptionStatuses
        case (.post, "/inApps/v1/notifications/history"): self = .notificationHistory
        case (.put, let p) where p.hasPrefix("/inApps/v1/transactions/consumption/"): self = .consumptionInformation
        default: return nil
        }
    }
}
