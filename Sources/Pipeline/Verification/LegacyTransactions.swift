import AppStore
import Foundation

extension VerifiedTransaction {
    /// A purchase from a locally verified StoreKit 1 receipt. The receipt carries no product
    /// type except Apple's undocumented attribute 1707; when it is absent `type` is empty and
    /// fulfil relies on the catalogue.
    init?(_ purchase: InAppPurchaseReceipt, bundleId: String, environment: String, signedDate: Date?) {
        guard let transactionId = purchase.transactionId, !transactionId.isEmpty, let productId = purchase.productId else {
            return nil
        }
        self.init(transactionId: transactionId, originalTransactionId: purchase.originalTransactionId ?? transactionId,
                  bundleId: bundleId, productId: productId, type: purchase.productType?.appleType ?? "",
                  quantity: Int(purchase.quantity ?? 1), purchaseDate: purchase.purchaseDate,
                  expiresDate: purchase.expiresDate, revocationDate: purchase.cancellationDate,
                  environment: environment, signedDate: signedDate)
    }

    /// A transaction from Apple's `verifyReceipt` answer (unsigned JSON, authenticated by TLS to Apple).
    init(_ transaction: VerifyReceiptTransaction, bundleId: String, environment: String, answeredAt: Date) {
        self.init(transactionId: transaction.transactionId,
                  originalTransactionId: transaction.originalTransactionId ?? transaction.transactionId,
                  bundleId: bundleId, productId: transaction.productId,
                  type: transaction.expiresDate != nil ? ProductType.autoRenewable.appleType : "",
                  quantity: transaction.quantity ?? 1, purchaseDate: transaction.purchaseDate,
                  expiresDate: transaction.expiresDate, revocationDate: transaction.cancellationDate,
                  revocationReason: transaction.cancellationReason.flatMap { Int($0) },
                  environment: environment, signedDate: answeredAt)
    }

}
