import Synchronization

/// The fate of one input record's outputs: lets whatever a stage changes while processing the
/// record (a ledger claim) count only once the record's outputs are acknowledged by the broker.
///
/// The runner makes one scope per processing attempt and hands it to the stage in
/// ``StageContext/delivery``; the stage passes it on to its collaborators, which register
/// ``onSettle(_:)`` callbacks for their tentative changes. The runner settles the scope exactly
/// once: `delivered: true` after the stage's emitted outputs were acknowledged, `false` on every
/// other path (a rejection or outcome instead of outputs, a timeout, a retry, a delivery failure,
/// an abandoned record). A tentative change is therefore confirmed only when the durable record
/// of it (the output) exists.
///
/// - Important: stages must not interpret ``partition`` and ``epoch``; they are there for
///   collaborators whose state is kept per partition (``KeyedStateStore``).
public final class DeliveryScope: Sendable {
    private enum State {
        case open([@Sendable (Bool) -> Void])
        case settled(Bool)
    }

    /// The input record's partition number, which is also where co-partitioned outputs go
    /// (``OutputPartitioning/inputPartition``).
    public let partition: Int32
    /// The assignment the input record was fetched under: a state store rebuilt for a later
    /// assignment ignores this scope's changes.
    public let epoch: AssignmentEpoch
    private let state = Mutex(State.open([]))
    private let deliverEarlier: (@Sendable () async -> Void)?

    /// Creates an open scope.
    /// - Parameters:
    ///   - partition: the input record's partition number.
    ///   - epoch: the assignment the input record was fetched under.
    ///   - deliverEarlier: what ``beforeWaiting()`` runs: the runner delivers the records its batch
    ///     processed before this one (nil: nothing held back).
    public init(partition: Int32, epoch: AssignmentEpoch = .initial, deliverEarlier: (@Sendable () async -> Void)? = nil) {
        self.partition = partition
        self.epoch = epoch
        self.deliverEarlier = deliverEarlier
    }

    /// To be called by a collaborator before it waits for another record's scope to settle (a
    /// pending update of the same key): records processed earlier in this record's batch have not
    /// been sent yet, and one of them may be what it waits for, so the runner delivers them first.
    public func beforeWaiting() async {
        await deliverEarlier?()
    }

    /// Runs `body` once when the scope settles, with whether the outputs were delivered; at once
    /// (on the calling task) if it has settled already.
    /// - Parameter body: the callback; it must not block.
    public func onSettle(_ body: @escaping @Sendable (Bool) -> Void) {
        let settled = state.withLock { state -> Bool? in
            switch state {
            case .open(var callbacks):
                callbacks.append(body)
                state = .open(callbacks)
                return nil
            case .settled(let delivered):
                return delivered
            }
        }
        if let settled { body(settled) }
    }

    /// Settles the scope and runs the callbacks; only the first call has an effect.
    /// - Parameter delivered: whether the stage's emitted outputs were acknowledged.
    public func settle(delivered: Bool) {
        let callbacks = state.withLock { state -> [@Sendable (Bool) -> Void] in
            guard case .open(let callbacks) = state else { return [] }
            state = .settled(delivered)
            return callbacks
        }
        for callback in callbacks { callback(delivered) }
    }

    /// How the scope settled; nil while open.
    public var outcome: Bool? {
        state.withLock { state in
            if case .settled(let delivered) = state { return delivered }
            return nil
        }
    }
}
