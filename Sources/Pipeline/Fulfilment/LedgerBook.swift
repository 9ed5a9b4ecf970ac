import Foundation

/// A 32-byte event id (the SHA-256 the hex event id spells), so a ledger holding millions of ids
/// stores 32 bytes each instead of a 64-character string.
struct EventKey: Hashable, Sendable {
    private let a, b, c, d: UInt64

    /// The key of an event id: its bytes when it is 64 hex digits (every receiptd event id),
    /// else the SHA-256 of the text.
    init(_ eventId: String) {
        var bytes = Self.hexBytes(eventId) ?? SHA256.hash(Array(eventId.utf8))
        bytes += [UInt8](repeating: 0, count: max(0, 32 - bytes.count))
        func word(_ i: Int) -> UInt64 { bytes[i..<i + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        (a, b, c, d) = (word(0), word(8), word(16), word(24))
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 64 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for i in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

/// What has been applied for one purchase (`originalTransactionId`).
public struct PurchaseHistory: Sendable, Equatable {
    /// The newest `signedDate` among its applied events.
    public var newestSignedDate: Date?
    /// The furthest `validUntil` among its applied grants, renewals and expirations.
    public var furthestValidUntil: Date?

    /// Creates a history.
    public init(newestSignedDate: Date? = nil, furthestValidUntil: Date? = nil) {
        self.newestSignedDate = newestSignedDate
        self.furthestValidUntil = furthestValidUntil
    }

    /// Adds an applied event.
    mutating func apply(_ event: LedgerEvent) {
        if let signed = event.signedDate { newestSignedDate = max(newestSignedDate ?? signed, signed) }
        if event.action != .revoke, let until = event.validUntil {
            furthestValidUntil = max(furthestValidUntil ?? until, until)
        }
    }
}

/// The knowledge of one ledger partition: every event applied (emitted and acknowledged, or read
/// back from the output partition) and, per purchase, its ``PurchaseHistory``. Pure state.
///
/// With a `capacity`, the oldest event ids and purchase histories are forgotten first in, first
/// out (the in-memory ledger); forgetting only ever leads to a re-emission with the same event id,
/// never to a suppression.
struct LedgerBook: Sendable {
    private var events: Set<EventKey> = []
    private var histories: [String: PurchaseHistory] = [:]
    private let capacity: Int?
    private var eventOrder: [EventKey] = []
    private var eventHead = 0
    private var purchaseOrder: [String] = []
    private var purchaseHead = 0

    init(capacity: Int? = nil) {
        self.capacity = capacity.map { max(1, $0) }
    }

    /// Events remembered.
    var count: Int { events.count }

    /// Whether `eventId` was applied.
    func contains(_ eventId: String) -> Bool { events.contains(EventKey(eventId)) }

    /// Records an applied event.
    mutating func apply(_ event: LedgerEvent) {
        let key = EventKey(event.eventId)
        if events.insert(key).inserted, let capacity {
            eventOrder.append(key)
            for forgotten in Self.trim(&eventOrder, &eventHead, to: capacity) { events.remove(forgotten) }
        }
        if histories[event.originalTransactionId] == nil, capacity != nil {
            purchaseOrder.append(event.originalTransactionId)
        }
        histories[event.originalTransactionId, default: PurchaseHistory()].apply(event)
        if let capacity {
            for forgotten in Self.trim(&purchaseOrder, &purchaseHead, to: capacity) { histories[forgotten] = nil }
        }
    }

    /// What a claim for `event` gets, pending claims aside: ``ClaimResult/duplicate`` if it was
    /// applied, ``ClaimResult/stale`` under ``EntitlementRules/isStale(_:after:revoked:)``,
    /// ``ClaimResult/firstTime`` otherwise.
    func verdict(for event: LedgerEvent) -> ClaimResult {
        if contains(event.eventId) { return .duplicate }
        let revoked = contains(EntitlementChanged.eventId(transactionId: event.transactionId, action: .revoke))
        if EntitlementRules.isStale(event, after: histories[event.originalTransactionId], revoked: revoked) {
            return .stale
        }
        return .firstTime
    }

    /// Drops the oldest entries of a FIFO beyond `capacity`. - Returns: the dropped entries.
    private static func trim<Element>(_ order: inout [Element], _ head: inout Int, to capacity: Int) -> [Element] {
        var dropped: [Element] = []
        while order.count - head > capacity {
            dropped.append(order[head])
            head += 1
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        return dropped
    }
}
