import Foundation
import Observability

/// Owners: folds fulfil's `owner-purchase/v1` updates into `entitlement-state/v1`, the per-owner
/// view on the compacted `entitlements.state` (one value per `bundleId/userId/entitlement`).
///
/// Its own consumer group, part of fulfil's deployment: fulfil's partitions follow purchases
/// (`originalTransactionId`), this view follows owners, so one owner's purchases from every fulfil
/// partition meet here. The state is kept like fulfil's ledger (``KeyedStateStore`` rebuilt from
/// the co-partitioned output), and the fold is idempotent and order-free (per purchase the
/// highest version wins), so a redelivered or reordered update changes nothing and emits nothing.
public struct OwnersStage: Stage {
    public typealias Input = OwnerPurchaseUpdate
    public typealias Output = EntitlementState
    public static var name: StageName { .owners }
    /// The store is all it waits on; its records run in the runner's batches.
    public static var waitsOn: StageWaiting { .deliveries }

    private let store: KeyedStateStore<EntitlementState>

    /// - Parameter store: owner states by key (``KeyedStateStore/ownerView(reader:topic:logger:)`` in production).
    public init(store: KeyedStateStore<EntitlementState>) {
        self.store = store
    }

    /// The store (the worker wires a Kafka-backed one in as the runner's ``PartitionAssignmentHook``).
    public var ownerStore: KeyedStateStore<EntitlementState> { store }

    public func process(_ input: OwnerPurchaseUpdate, context: StageContext) async throws -> StageResult<EntitlementState> {
        let key = input.key
        let next = try await store.update(key.encoded, scope: context.delivery) { current -> (EntitlementState?, EntitlementState?) in
            var state = current ?? EntitlementState(key: key, purchases: [])
            guard state.apply(input.purchase) else { return (nil, nil) }
            return (state, state)
        }
        // Nothing new is not a submission's outcome (fulfil accounted for the submission): no record.
        return .emit(next.map { [$0] } ?? [])
    }
}

extension KeyedStateStore where Value == EntitlementState {
    /// The owner view's production store: rebuilt from `entitlements.state` (the last value per key wins).
    public static func ownerView(reader: any PartitionLogReader, topic: String, logger: Logger) -> KeyedStateStore<EntitlementState> {
        KeyedStateStore(reader: reader, topic: topic, logger: logger) { bytes, _ in
            guard let state = try? ContractCoding.decode(EntitlementState.self, from: bytes) else { return nil }
            return (state.key.encoded, state)
        }
    }
}
