import AppStore
import Foundation
import HTTP
import Synchronization

extension FakeAppStoreRouter {
    /// `POST /verifyReceipt` (or `/sandbox/verifyReceipt`), with Apple's status codes: 21000 for an
    /// unreadable request, 21002 for malformed `receipt-data`, 21003 for a receipt the fake never
    /// issued, 21004 for a wrong shared secret, 21007 for a sandbox receipt at production, 21008
    /// for a production receipt at sandbox, else status 0 with `receipt`, `latest_receipt_info`
    /// and `pending_renewal_info` (unsigned JSON, string values, as Apple sends them).
    func verifyReceipt(_ request: HTTPServerRequest, endpoint: AppStoreEnvironment,
                       knobs: FakeAppStoreFaults) -> HTTPServerResponse {
        func status(_ code: Int64) -> HTTPServerResponse {
            .json(FakeJSON.object([("status", .integer(code)), ("environment", .string(endpoint.rawValue))]).bytes)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
            return status(21000)
        }
        guard let receiptData = object["receipt-data"] as? String, Data(base64Encoded: receiptData) != nil else {
            return status(21002)
        }
        guard let (issuer, transactions) = store.receipt(receiptData) else { return status(21003) }
        if let secret = configuration.credentials.sharedSecret, object["password"] as? String != secret {
            return status(21004)
        }
        if issuer == .sandbox && endpoint == .production && knobs.sandboxReceiptOnProductionAnswers21007 {
            counters.reroutes.add(1, ordering: .relaxed)
            return status(21007)
        }
        if issuer == .production && endpoint == .sandbox {
            counters.reroutes.add(1, ordering: .relaxed)
            return status(21008)
        }
        let excludeOld = object["exclude-old-transactions"] as? Bool ?? false
        return .json(receiptBody(receiptData: receiptData, environment: issuer, transactions: transactions,
                                 excludeOld: excludeOld).bytes)
    }

    private func receiptBody(receiptData: String, environment: AppStoreEnvironment, transactions: [FakeTransaction],
                             excludeOld: Bool) -> FakeJSON {
        let subscriptions = transactions.filter { $0.type == .autoRenewable }
        var latestByOriginal: [String: FakeTransaction] = [:]
        for transaction in subscriptions {
            if let current = latestByOriginal[transaction.originalTransactionId], current.purchaseDate > transaction.purchaseDate {
                continue
            }
            latestByOriginal[transaction.originalTransactionId] = transaction
        }
        let latestInfo = excludeOld
            ? latestByOriginal.values.sorted { $0.originalTransactionId < $1.originalTransactionId } : subscriptions
        let created = transactions.map(\.purchaseDate).max() ?? now
        var members: [(String, FakeJSON)] = [
            ("status", .integer(0)),
            ("environment", .string(environment.rawValue)),
            ("receipt", .object([
                ("receipt_type", .string(environment == .sandbox ? "ProductionSandbox" : "Production")),
                ("bundle_id", .string(configuration.bundleId)),
                ("application_version", .string("1")),
                ("original_application_version", .string("1.0")),
                ("receipt_creation_date_ms", .string(String(created.fakeMilliseconds))),
                ("request_date_ms", .string(String(now.fakeMilliseconds))),
                ("in_app", .array(transactions.map(\.legacyReceiptItem))),
            ])),
        ]
        if !subscriptions.isEmpty {
            members.append(("latest_receipt_info", .array(latestInfo.map(\.legacyReceiptItem))))
            members.append(("pending_renewal_info", .array(latestByOriginal.values
                .sorted { $0.originalTransactionId < $1.originalTransactionId }
                .map { transaction in
                    .object([
                        ("auto_renew_product_id", .string(transaction.productId)),
                        ("product_id", .string(transaction.productId)),
                        ("original_transaction_id", .string(transaction.originalTransactionId)),
                        ("auto_renew_status", .string(transaction.autoRenews ? "1" : "0")),
                    ])
                })))
            members.append(("latest_receipt", .string(receiptData)))
        }
        return .object(members)
    }
}
