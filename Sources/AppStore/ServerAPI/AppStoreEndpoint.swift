import HTTP

/// The App Store endpoints receiptd calls: the Server API's, each with its own request budget
/// (Apple limits requests per app and endpoint, so budgets and pauses are kept per endpoint), and
/// the legacy `verifyReceipt`; metrics label requests by them.
public enum AppStoreEndpoint: String, Sendable, CaseIterable, Codable {
    case transactionInfo
    case transactionHistory
    case subscriptionStatuses
    case notificationHistory
    case consumptionInformation
    case verifyReceipt

    /// The Server API's endpoints: those a request budget can name.
    public static var serverAPI: [AppStoreEndpoint] { allCases.filter { $0 != .verifyReceipt } }

    /// The `endpoint` label of the App Store request metrics.
    public var metricLabel: String {
        switch self {
        case .transactionInfo: "transaction-info"
        case .transactionHistory: "transaction-history"
        case .subscriptionStatuses: "subscription-statuses"
        case .notificationHistory: "notification-history"
        case .consumptionInformation: "consumption-information"
        case .verifyReceipt: "verify-receipt"
        }
    }

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
