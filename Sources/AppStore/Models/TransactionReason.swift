/// Why a transaction happened (`transactionReason`).
public enum TransactionReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// `PURCHASE`: the customer initiated it (or it is a subscription's first purchase).
    case purchase = "PURCHASE"
    /// `RENEWAL`: an automatic subscription renewal.
    case renewal = "RENEWAL"
}
