import Foundation

/// What a fulfilment ledger knows of one entitlement event: enough to refuse a second emission
/// of it and to judge later updates of the same purchase stale (``EntitlementRules/isStale(_:after:revoked:)``).
///
/// The same fields are read back from `entitlement-changed/v1` records when a ledger partition is
/// rebuilt, so a claim and a rebuilt entry are interchangeable.
public struct LedgerEvent: Sendable, Hashable, Decodable {
    /// The deterministic event id (``EntitlementChanged/eventId(transactionId:action:)``).
    public var eventId: String
    /// What the event does.
    public var action: EntitlementAction
    /// The App Store transaction.
    public var transactionId: String
    /// The purchase it belongs to (stable across renewals).
    public var originalTransactionId: String
    /// When Apple signed the transaction (nil: unknown, never judged stale by date).
    public var signedDate: Date?
    /// When access ends (nil: no end).
    public var validUntil: Date?

    /// Creates an event.
    public init(eventId: String, action: EntitlementAction, transactionId: String, originalTransactionId: String,
                signedDate: Date?, validUntil: Date?) {
        self.eventId = eventId
        self.action = action
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.signedDate = signedDate
        self.validUntil = validUntil
    }

    /// The ledger's view of an entitlement change.
    public init(_ change: EntitlementChanged) {
        self.init(eventId: change.eventId, action: change.action, transactionId: change.transactionId,
                  originalTransactionId: change.originalTransactionId, signedDate: change.signedDate,
                  validUntil: change.validUntil)
    }

    private enum CodingKeys: String, CodingKey {
        case schema, eventId, action, transactionId, originalTransactionId, signedDate, validUntil
    }

    /// Decodes the ledger's fields of an `entitlement-changed/v1` document (other members are ignored).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let schema = try c.decode(String.self, forKey: .schema)
        guard schema == EntitlementChanged.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "not \(EntitlementChanged.schema)")
        }
        eventId = try c.decode(String.self, forKey: .eventId)
        action = try c.decode(EntitlementAction.self, forKey: .action)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        signedDate = try c.decodeTimestampIfPresent(forKey: .signedDate)
        validUntil = try c.decodeTimestampIfPresent(forKey: .validUntil)
    }
}
