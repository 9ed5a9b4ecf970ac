import Foundation
import Synchronization

/// The claim machinery both fulfilment ledgers share: one ``LedgerBook`` per ledger partition,
/// tentative (pending) claims tied to a ``DeliveryScope``, and waiters for pending claims.
///
/// A partition is *installed* with a book (``install(_:book:)``) and *removed* when it is no
/// longer owned (``remove(_:)``); every installation is a new incarnation, so a scope settling
/// after its partition was removed (or removed and rebuilt) changes nothing.
final class LedgerPartitions: Sendable {
    private struct Partition {
        var book: LedgerBook
        let incarnation: Int
        /// Pending claims: event id → the claimed event.
        var pending: [EventKey: LedgerEvent] = [:]
    }

    private struct Waiter {
        let partition: Int32
        let key: EventKey
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var partitions: [Int32: Partition] = [:]
        var nextIncarnation = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private enum Step {
        case answer(ClaimResult)
        case claimed(incarnation: Int)
        case wait
        case notReady
    }

    private let state = Mutex(State())

    /// Installs (or replaces) a partition's book; pending claims of an earlier incarnation are void.
    func install(_ partition: Int32, book: LedgerBook) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.partitions[partition] = Partition(book: book, incarnation: state.nextIncarnation)
            state.nextIncarnation += 1
            return Self.takeWaiters(&state) { $0.partition == partition }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Installs a partition's book unless one is installed (whose pending claims must survive).
    func installIfAbsent(_ partition: Int32, book: LedgerBook) {
        state.withLock { state in
            guard state.partitions[partition] == nil else { return }
            state.partitions[partition] = Partition(book: book, incarnation: state.nextIncarnation)
            state.nextIncarnation += 1
        }
    }

    /// Forgets a partition; claims waiting on it then fail as not ready.
    func remove(_ partition: Int32) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.partitions[partition] = nil
            return Self.takeWaiters(&state) { $0.partition == partition }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Whether a partition is installed.
    func isInstalled(_ partition: Int32) -> Bool {
        state.withLock { $0.partitions[partition] != nil }
    }

    /// Installed partitions.
    var installed: Set<Int32> { state.withLock { Set($0.partitions.keys) } }

    /// Events applied in a partition (nil when not installed).
    func count(in partition: Int32) -> Int? {
        state.withLock { $0.partitions[partition]?.book.count }
    }

    /// Claims `event` in `partition` (see ``FulfilmentLedger/claim(_:scope:)``).
    /// - Throws: ``FulfilmentLedgerError`` when the partition is not installed;
    ///   `CancellationError` when cancelled while waiting for a pending claim.
    func claim(_ event: LedgerEvent, in partition: Int32, scope: DeliveryScope?) async throws -> ClaimResult {
        let key = EventKey(event.eventId)
        while true {
            try Task.checkCancellation()
            let step = state.withLock { state -> Step in
                guard var entry = state.partitions[partition] else { return .notReady }
                if entry.pending[key] != nil { return .wait }
                let verdict = entry.book.verdict(for: event)
                guard verdict == .firstTime else { return .answer(verdict) }
                if scope == nil {
                    entry.book.apply(event)
                } else {
                    entry.pending[key] = event
                }
                state.partitions[partition] = entry
                return scope == nil ? .answer(.firstTime) : .claimed(incarnation: entry.incarnation)
            }
            switch step {
            case .answer(let result):
                return result
            case .claimed(let incarnation):
                scope!.onSettle { [self] delivered in
                    settle(key, in: partition, incarnation: incarnation, delivered: delivered)
                }
                return .firstTime
            case .notReady:
                throw FulfilmentLedgerError("ledger partition \(partition) is not ready (not assigned, or still being rebuilt)")
            case .wait:
                await waitForSettlement(of: key, in: partition)
            }
        }
    }

    /// A pending claim's scope settled: delivered → applied; otherwise → withdrawn.
    private func settle(_ key: EventKey, in partition: Int32, incarnation: Int, delivered: Bool) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard var entry = state.partitions[partition], entry.incarnation == incarnation,
                  let event = entry.pending.removeValue(forKey: key) else { return [] }
            if delivered { entry.book.apply(event) }
            state.partitions[partition] = entry
            return Self.takeWaiters(&state) { $0.partition == partition && $0.key == key }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Suspends until the pending claim of `key` settles, its partition changes, or cancellation.
    private func waitForSettlement(of key: EventKey, in partition: Int32) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard !Task.isCancelled, state.partitions[partition]?.pending[key] != nil else { return true }
                    state.waiters[id] = Waiter(partition: partition, key: key, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    private static func takeWaiters(_ state: inout State, where matches: (Waiter) -> Bool) -> [CheckedContinuation<Void, Never>] {
        let ids = state.waiters.filter { matches($0.value) }.map(\.key)
        return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
    }
}
