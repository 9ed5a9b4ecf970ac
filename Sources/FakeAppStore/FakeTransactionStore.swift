import AppStore
import Foundation
import Synchronization

/// The fake App Store's memory: transactions by id and by customer, and the receipts it issued.
///
/// Transaction ids are generated per environment from disjoint ranges (Production from
/// 1000000000000001, Sandbox from 2000000000000001), so an id exists in exactly one environment,
/// as with Apple, and clients must find it with the environment fallback.
///
/// - Important: Thread-safe; handlers read it concurrently while tests add purchases.
public final class FakeTransactionStore: Sendable {
    private struct State {
        var transactions: [String: FakeTransaction] = [:]
        var nextId: [AppStoreEnvironment: Int64] = [.production: 1_000_000_000_000_001, .sandbox: 2_000_000_000_000_001]
        var receipts: [String: (environment: AppStoreEnvironment, customerId: String)] = [:]
        var receiptCounter = 0
    }

    private let state = Mutex(State())

    /// Creates an empty store.
    /// - Parameter seed: shifts the generated transaction ids by a million per seed (modulo 1000),
    ///   so fakes started with different seeds hand out different ids.
    public init(seed: UInt64 = 0) {
        let shift = Int64(seed % 1000) * 1_000_000
        state.withLock { state in
            for environment in Array(state.nextId.keys) { state.nextId[environment]! += shift }
        }
    }

    /// Adds (or replaces) a transaction given in full.
    /// - Parameter transaction: The transaction.
    public func add(_ transaction: FakeTransaction) {
        state.withLock { $0.transactions[transaction.transactionId] = transaction }
    }

    /// Records a new purchase with a generated transaction id.
    /// - Parameters:
    ///   - productId: The product.
    ///   - type: The product type.
    ///   - environment: Production or Sandbox.
    ///   - customerId: The customer; defaults to the new transaction id (a customer of one purchase).
    ///   - purchaseDate: When it was bought.
    ///   - expiresDate: End of the period (subscriptions).
    ///   - quantity: Quantity (consumables).
    /// - Returns: The stored transaction.
    @discardableResult
    public func purchase(productId: String, type: ProductType, environment: AppStoreEnvironment, customerId: String? = nil,
                         purchaseDate: Date, expiresDate: Date? = nil, quantity: Int = 1) -> FakeTransaction {
        state.withLock { state in
            let id = String(state.nextId[environment, default: 3_000_000_000_000_001])
            state.nextId[environment, default: 3_000_000_000_000_001] += 1
            let transaction = FakeTransaction(
                transactionId: id, customerId: customerId ?? id, productId: productId, type: type,
                subscriptionGroupIdentifier: type == .autoRenewable ? "21000001" : nil, purchaseDate: purchaseDate,
                expiresDate: expiresDate, quantity: quantity, environment: environment)
            state.transactions[id] = transaction
            return transaction
        }
    }

    /// Records the next period of a subscription: a new transaction id, same original id and customer.
    /// - Parameters:
    ///   - previous: The latest transaction of the subscription.
    ///   - period: The length of the new period.
    /// - Returns: The stored renewal.
    @discardableResult
    public func renew(_ previous: FakeTransaction, period: Duration) -> FakeTransaction {
        state.withLock { state in
            let id = String(state.nextId[previous.environment, default: 3_000_000_000_000_001])
            state.nextId[previous.environment, default: 3_000_000_000_000_001] += 1
            let start = previous.expiresDate ?? previous.purchaseDate
            var renewal = previous
            renewal.transactionId = id
            renewal.purchaseDate = start
            renewal.expiresDate = start.addingTimeInterval(Double(period.components.seconds))
            renewal.revocationDate = nil
            state.transactions[id] = renewal
            return renewal
        }
    }

    /// The transaction with this id in this environment.
    /// - Parameters:
    ///   - id: The transaction id.
    ///   - environment: The environment asked.
    /// - Returns: The transaction, or `nil` when that environment does not know it.
    public func transaction(id: String, environment: AppStoreEnvironment) -> FakeTransaction? {
        state.withLock { $0.transactions[id] }.flatMap { $0.environment == environment ? $0 : nil }
    }

    /// Every transaction of the customer owning `id`, oldest purchase first.
    /// - Parameters:
    ///   - id: Any transaction id of the customer.
    ///   - environment: The environment asked.
    /// - Returns: The customer's transactions, or `nil` when `id` is unknown there.
    public func customerTransactions(of id: String, environment: AppStoreEnvironment) -> [FakeTransaction]? {
        state.withLock { state -> [FakeTransaction]? in
            guard let owner = state.transactions[id], owner.environment == environment else { return nil }
            return state.transactions.values
                .filter { $0.customerId == owner.customerId && $0.environment == environment }
                .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        }
    }

    /// Issues opaque `receipt-data` (base64) that the fake's `verifyReceipt` resolves to the
    /// customer's purchases; it is not a PKCS#7 receipt, only a token standing for one.
    /// - Parameters:
    ///   - customerId: Whose purchases the receipt shows.
    ///   - environment: The environment that issued it (a sandbox receipt sent to production gets 21007).
    /// - Returns: The base64 receipt data.
    public func makeReceipt(customerId: String, environment: AppStoreEnvironment) -> String {
        state.withLock { state in
            state.receiptCounter += 1
            let token = "fake-receipt|\(environment.rawValue)|\(state.receiptCounter)|\(customerId)"
            let data = Data(token.utf8).base64EncodedString()
            state.receipts[data] = (environment, customerId)
            return data
        }
    }

    /// The receipt's issuing environment and the customer's transactions there.
    func receipt(_ data: String) -> (environment: AppStoreEnvironment, transactions: [FakeTransaction])? {
        state.withLock { state in
            guard let entry = state.receipts[data] else { return nil }
            let transactions = state.transactions.values
                .filter { $0.customerId == entry.customerId && $0.environment == entry.environment }
                .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
            return (entry.environment, transactions)
        }
    }

    /// The number of transactions held.
    public var count: Int { state.withLock { $0.transactions.count } }
}
