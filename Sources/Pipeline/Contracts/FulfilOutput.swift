/// What fulfil emits for one applied input: `entitlement-changed/v2` events (co-partitioned with
/// `receipts.verified`: the ledger) and `owner-purchase/v1` updates for the owner view (keyed by
/// owner and entitlement), acknowledged together before the input's offset is stored. Not
/// indirect: an event's purchase state is one reference, and reading a payload out of an
/// indirect case copied it (a retain per string) for each of its key, size and writing.
public enum FulfilOutput: Sendable, Equatable, OutboundMessage {
    case event(EntitlementChanged)
    case ownerUpdate(OwnerPurchaseUpdate)
    /// A verified `CONSUMPTION_REQUEST`, for the backend (only with consumption requests enabled).
    case consumptionRequest(ConsumptionRequest)

    public static var outputTopic: OutputTopic { .entitlementsChanged }
    public static var partitioning: OutputPartitioning { .inputPartition }

    public var topic: OutputTopic {
        switch self {
        case .event: .entitlementsChanged
        case .ownerUpdate: .ownerUpdates
        case .consumptionRequest: .consumptionRequests
        }
    }

    public var messagePartitioning: OutputPartitioning {
        switch self {
        case .event: .inputPartition
        case .ownerUpdate, .consumptionRequest: .byKey
        }
    }

    public var recordKey: String {
        switch self {
        case .event(let event): event.owner.encoded
        case .ownerUpdate(let update): update.recordKey
        case .consumptionRequest(let request): request.recordKey
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .event(let event): try event.encode(to: encoder)
        case .ownerUpdate(let update): try update.encode(to: encoder)
        case .consumptionRequest(let request): try request.encode(to: encoder)
        }
    }

    /// The event, if this is one.
    public var event: EntitlementChanged? {
        if case .event(let event) = self { return event }
        return nil
    }

    /// The owner-view update, if this is one.
    public var ownerUpdate: OwnerPurchaseUpdate? {
        if case .ownerUpdate(let update) = self { return update }
        return nil
    }
}
