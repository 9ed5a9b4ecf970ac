import Foundation

/// The business rules that turn a verified transaction of a known product into an entitlement
/// change, as a pure function (no ledger, no I/O) so every rule is testable on its own.
///
/// | situation | action | validUntil | effectiveAt |
/// |---|---|---|---|
/// | `revocationDate` set (any type) | `revoke` | revocationDate | revocationDate |
/// | auto-renewable, `expiresDate` ≤ `signedDate` | `expire` | expiresDate | expiresDate |
/// | auto-renewable, first period (`transactionId == originalTransactionId`) | `grant` | expiresDate | purchaseDate |
/// | auto-renewable, later period | `renew` | expiresDate | purchaseDate |
/// | non-renewing | `grant` | purchaseDate + durationMonths (calendar months, UTC) | purchaseDate |
/// | non-consumable | `grant` | `null` (forever) | purchaseDate |
/// | consumable | `grant`, quantity = quantity × unitsPerPurchase | `null` | purchaseDate |
///
/// Apple's `type` must agree with the catalogue (`product-type-mismatch` otherwise). An
/// auto-renewable without `expiresDate`, a non-renewing without `purchaseDate`, or a consumable
/// with quantity < 1 is `invalid-transaction`. When `signedDate` is missing, the stage's "now"
/// stands in for it; when `purchaseDate` is missing elsewhere, `signedDate` (then "now") does.
///
/// **Stale updates** (``isStale(_:after:revoked:)``, applied by the fulfilment ledger against what it
/// has already emitted for the purchase): an update is suppressed as `stale-suppressed` when it
/// would move the entitlement backwards:
///
/// | update | stale when |
/// |---|---|
/// | `revoke` | never (a refund of an older transaction still revokes) |
/// | no `signedDate`, or nothing applied yet for its `originalTransactionId` | never |
/// | signed at or after the newest `signedDate` applied for the purchase | never |
/// | older `grant`/`renew` whose `validUntil` lies beyond every `validUntil` applied for the purchase, of a transaction not revoked | never (it extends access: a later period whose JWS was signed before a re-signed older one) |
/// | any other older update (an older renewal after a newer one, an older `expire` after a renewal, a grant of a refunded transaction) | stale |
///
/// Dates compare `signedDate` (when Apple signed the JWS, which orders the App Store's view of a
/// purchase), never processing or arrival time.
public enum EntitlementRules {
    /// The outcome of the rules for one transaction.
    public struct Decision: Sendable, Equatable {
        /// What happens to the entitlement.
        public var action: EntitlementAction
        /// When access ends (nil: never).
        public var validUntil: Date?
        /// When the change takes effect.
        public var effectiveAt: Date
        /// Units granted (consumables only).
        public var quantity: Int?

        /// Creates a decision.
        public init(action: EntitlementAction, validUntil: Date?, effectiveAt: Date, quantity: Int? = nil) {
            self.action = action
            self.validUntil = validUntil
            self.effectiveAt = effectiveAt
            self.quantity = quantity
        }
    }

    /// Applies the rules.
    /// - Parameters:
    ///   - transaction: the verified transaction.
    ///   - product: its catalogue entry (looked up by the caller).
    ///   - now: fallback for missing Apple dates.
    /// - Returns: the decision, or a rejection (`product-type-mismatch`, `invalid-transaction`).
    public static func decide(_ transaction: VerifiedTransaction, product: CatalogueProduct,
                              now: Date) -> Result<Decision, Rejection> {
        let subject = SubmissionSubject(transactionId: transaction.transactionId)
        // Legacy receipts usually carry no product type (empty `type`): the catalogue decides.
        let appleType = transaction.type.isEmpty ? product.type : transaction.productType
        guard let appleType else {
            return .failure(Rejection(reason: .productTypeMismatch, detail: "Apple type \"\(transaction.type.prefix(64))\" "
                + "is unknown; catalogue says \(product.type.rawValue) for \(product.productId)", subject: subject))
        }
        guard appleType == product.type else {
            return .failure(Rejection(reason: .productTypeMismatch, detail: "Apple type \(appleType.rawValue) contradicts "
                + "catalogue type \(product.type.rawValue) for \(product.productId)", subject: subject))
        }
        let signedOrNow = transaction.signedDate ?? now
        let purchasedAt = transaction.purchaseDate ?? signedOrNow

        var quantity: Int?
        if product.type == .consumable {
            let (units, overflow) = transaction.quantity.multipliedReportingOverflow(by: product.unitsPerPurchase ?? 1)
            guard transaction.quantity >= 1, !overflow else {
                return .failure(Rejection(reason: .invalidTransaction,
                                          detail: "consumable quantity \(transaction.quantity) is not usable", subject: subject))
            }
            quantity = units
        }

        if let revokedAt = transaction.revocationDate {
            return .success(Decision(action: .revoke, validUntil: revokedAt, effectiveAt: revokedAt, quantity: quantity))
        }

        switch product.type {
        case .autoRenewable:
            guard let expiresAt = transaction.expiresDate else {
                return .failure(Rejection(reason: .invalidTransaction,
                                          detail: "auto-renewable transaction without expiresDate", subject: subject))
            }
            if expiresAt <= signedOrNow {
                return .success(Decision(action: .expire, validUntil: expiresAt, effectiveAt: expiresAt))
            }
            let action: EntitlementAction = transaction.transactionId == transaction.originalTransactionId ? .grant : .renew
            return .success(Decision(action: action, validUntil: expiresAt, effectiveAt: purchasedAt))
        case .nonRenewing:
            guard let purchaseDate = transaction.purchaseDate, let months = product.durationMonths else {
                return .failure(Rejection(reason: .invalidTransaction,
                                          detail: "non-renewing transaction without purchaseDate", subject: subject))
            }
            return .success(Decision(action: .grant, validUntil: UTCCalendar.adding(months: months, to: purchaseDate),
                                     effectiveAt: purchaseDate))
        case .nonConsumable:
            return .success(Decision(action: .grant, validUntil: nil, effectiveAt: purchasedAt))
        case .consumable:
            return .success(Decision(action: .grant, validUntil: nil, effectiveAt: purchasedAt, quantity: quantity))
        }
    }

    /// Whether an update of a purchase would move its entitlement backwards given what was
    /// already applied (the table above).
    /// - Parameters:
    ///   - event: the update.
    ///   - history: what was applied for `event.originalTransactionId` (nil: nothing).
    ///   - revoked: whether a `revoke` of `event.transactionId` itself was applied.
    /// - Returns: true to suppress the update as `stale-suppressed`.
    public static func isStale(_ event: LedgerEvent, after history: PurchaseHistory?, revoked: Bool) -> Bool {
        guard event.action != .revoke, let signed = event.signedDate, let newest = history?.newestSignedDate,
              signed < newest else { return false }
        if event.action == .grant || event.action == .renew, !revoked, let until = event.validUntil,
           until > (history?.furthestValidUntil ?? .distantPast) {
            return false
        }
        return true
    }
}
