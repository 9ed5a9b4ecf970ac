import Foundation
import Testing
@testable import Pipeline

/// Tentative keyed updates under a ``DeliveryScope`` (``StatePartitions``, behind every
/// ``KeyedStateStore``): an update counts once its outputs are acknowledged, is withdrawn
/// otherwise, and a second update of the key waits for it.
@Suite(.timeLimit(.minutes(1)))
struct StatePartitionsTests {
    /// A partition store of counters with partition 0 installed.
    private func partitions(capacity: Int? = nil) -> StatePartitions<Int> {
        let partitions = StatePartitions<Int>(capacity: capacity)
        partitions.install(0, values: [:])
        return partitions
    }

    /// Increments `key` (from nil to 1) and answers the value it saw.
    private func increment(_ partitions: StatePartitions<Int>, _ key: String = "k", in partition: Int32 = 0,
                           scope: DeliveryScope?) async throws -> Int? {
        try await partitions.update(key, in: partition, scope: scope) { current in ((current ?? 0) + 1, current) }
    }

    /// Waits (without sleeping) until `count` updates are parked behind a pending one.
    private func waitForWaiters(_ partitions: StatePartitions<Int>, count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while partitions.waitingUpdateCount < count {
            guard ContinuousClock.now < deadline else {
                throw UnexpectedResult(description: "\(partitions.waitingUpdateCount) of \(count) updates waited")
            }
            await Task.yield()
        }
    }

    @Test func anUpdateCountsOnlyOnceItsScopeSettlesDelivered() async throws {
        let partitions = partitions()
        let scope = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: scope) == nil)
        #expect(partitions.value("k", in: 0) == nil, "pending, not applied")
        scope.settle(delivered: true)
        #expect(partitions.value("k", in: 0) == 1)
        #expect(try await increment(partitions, scope: DeliveryScope(partition: 0)) == 1)
    }

    @Test func anUpdateWhoseOutputsWereNotDeliveredIsWithdrawnAndTheRetryAppliesItAgain() async throws {
        let partitions = partitions()
        let failed = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: failed) == nil)
        failed.settle(delivered: false)
        #expect(partitions.value("k", in: 0) == nil)
        // The record's next attempt (a retry, a redelivery) decides from the same state: nothing was lost.
        let retry = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: retry) == nil)
        retry.settle(delivered: true)
        #expect(partitions.value("k", in: 0) == 1)
    }

    @Test func withoutAScopeAnUpdateAppliesAtOnceAndANilValueChangesNothing() async throws {
        let partitions = partitions()
        #expect(try await increment(partitions, scope: nil) == nil)
        #expect(partitions.value("k", in: 0) == 1)
        let seen = try await partitions.update("k", in: 0, scope: DeliveryScope(partition: 0)) { current in (nil as Int?, current) }
        #expect(seen == 1)
        // An unchanged key leaves nothing pending: the next update does not wait.
        #expect(try await increment(partitions, scope: nil) == 1)
        #expect(partitions.value("k", in: 0) == 2)
    }

    @Test func aThrowingBodyChangesNothing() async throws {
        struct Refused: Error {}
        let partitions = partitions()
        await #expect(throws: Refused.self) {
            try await partitions.update("k", in: 0, scope: DeliveryScope(partition: 0)) { (_: Int?) -> (Int?, Void) in throw Refused() }
        }
        #expect(try await increment(partitions, scope: nil) == nil)
    }

    @Test func aConcurrentUpdateOfTheSameKeyWaitsForThePendingOneToSettle() async throws {
        let partitions = partitions()
        let first = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: first) == nil)
        let scopes = [DeliveryScope(partition: 0), DeliveryScope(partition: 0)]
        let seen = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
            for (index, scope) in scopes.enumerated() {
                group.addTask { (index, try await increment(partitions, scope: scope)) }
            }
            try await waitForWaiters(partitions, count: 2)
            // Another key is not held up by the pending one.
            #expect(try await increment(partitions, "other", scope: nil) == nil)
            first.settle(delivered: false)  // withdrawn: exactly one waiter decides next, from nothing
            var seen: [Int?] = []
            let (winner, value) = try #require(try await group.next())
            seen.append(value)
            scopes[winner].settle(delivered: true)  // acknowledged: the other sees its value
            let (other, otherValue) = try #require(try await group.next())
            seen.append(otherValue)
            scopes[other].settle(delivered: true)
            return seen
        }
        #expect(seen == [nil, 1])
        #expect(partitions.value("k", in: 0) == 2)
    }

    @Test func aWaitingUpdateIsCancellable() async throws {
        let partitions = partitions()
        #expect(try await increment(partitions, scope: DeliveryScope(partition: 0)) == nil)
        let waiter = Task { try await increment(partitions, scope: DeliveryScope(partition: 0)) }
        try await waitForWaiters(partitions, count: 1)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(partitions.waitingUpdateCount == 0)
    }

    @Test func aPartitionRemovedOrInstalledAgainVoidsTheScopesOfItsEarlierInstallation() async throws {
        let partitions = partitions()
        let stale = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: stale) == nil)
        // Reinstalled (the partition was revoked and assigned again, its state rebuilt).
        partitions.install(0, values: ["k": 7])
        stale.settle(delivered: true)
        #expect(partitions.value("k", in: 0) == 7, "the earlier installation's update is void")
        #expect(try await increment(partitions, scope: nil) == 7, "nothing pending is left behind")

        // Removed while an update waits on a pending one: the waiter fails as not ready.
        let pending = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: pending) == 8)
        let waiter = Task { try await increment(partitions, scope: DeliveryScope(partition: 0)) }
        try await waitForWaiters(partitions, count: 1)
        partitions.remove(0)
        await #expect(throws: FulfilmentLedgerError.self) { try await waiter.value }
        pending.settle(delivered: true)
        #expect(!partitions.isInstalled(0) && partitions.value("k", in: 0) == nil)
        await #expect(throws: FulfilmentLedgerError.self) { try await increment(partitions, scope: nil) }
        await #expect(throws: FulfilmentLedgerError.self) { try await increment(partitions, in: 1, scope: nil) }
    }

    /// A partition rebuilt for a later assignment refuses updates of records fetched under an
    /// earlier one, and a scope settles only the update it made: an earlier installation's scope
    /// never applies, or withdraws, the pending update of a later one.
    @Test func aPartitionRebuiltForALaterAssignmentIgnoresRecordsOfEarlierOnes() async throws {
        let partitions = StatePartitions<Int>()
        partitions.install(0, values: [:], epoch: AssignmentEpoch(2))
        let early = DeliveryScope(partition: 0, epoch: AssignmentEpoch(2))
        #expect(try await increment(partitions, scope: early) == nil)
        partitions.install(0, values: ["k": 7], epoch: AssignmentEpoch(5))
        await #expect(throws: FulfilmentLedgerError.self) {
            try await increment(partitions, scope: DeliveryScope(partition: 0, epoch: AssignmentEpoch(4)))
        }
        let current = DeliveryScope(partition: 0, epoch: AssignmentEpoch(5))
        #expect(try await increment(partitions, scope: current) == 7)
        early.settle(delivered: false)  // would withdraw the pending update if it took any
        #expect(partitions.value("k", in: 0) == 7)
        // A later assignment of another partition of the same state (a retry tier) is welcome.
        let later = Task { try await increment(partitions, scope: DeliveryScope(partition: 0, epoch: AssignmentEpoch(6))) }
        try await waitForWaiters(partitions, count: 1)
        current.settle(delivered: true)
        #expect(try await later.value == 8)
    }

    @Test func installIfAbsentKeepsAnInstalledPartitionAndItsPendingUpdates() async throws {
        let partitions = partitions()
        let scope = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, scope: scope) == nil)
        partitions.installIfAbsent(0, values: ["k": 42], epoch: .initial)
        partitions.installIfAbsent(1, values: ["k": 42], epoch: .initial)
        scope.settle(delivered: true)
        #expect(partitions.value("k", in: 0) == 1)
        #expect(partitions.value("k", in: 1) == 42)
        #expect(partitions.installed == [0, 1])
    }

    @Test func aBoundedStoreForgetsItsOldestKeysSoTheyCountAsNew() async throws {
        let partitions = partitions(capacity: 2)
        for key in ["e0", "e1", "e2"] { _ = try await increment(partitions, key, scope: nil) }  // e2 evicts e0
        #expect(partitions.count(in: 0) == 2)
        #expect(partitions.value("e0", in: 0) == nil)
        // Updating a known key does not make it newer: e1 is still the oldest.
        _ = try await increment(partitions, "e1", scope: nil)
        // Forgotten: decided again from nothing (re-emitted downstream, never silently dropped).
        #expect(try await increment(partitions, "e0", scope: nil) == nil)
        #expect(partitions.value("e1", in: 0) == nil)
        #expect(partitions.value("e2", in: 0) == 1)
        // A pending update is bounded only once applied.
        let scope = DeliveryScope(partition: 0)
        #expect(try await increment(partitions, "e3", scope: scope) == nil)
        #expect(partitions.count(in: 0) == 2)
        scope.settle(delivered: true)
        #expect(partitions.count(in: 0) == 2)
        #expect(partitions.value("e2", in: 0) == nil && partitions.value("e3", in: 0) == 1)
    }

    /// A bound of 8,192 keys or more is kept by each of the partition's stripes for its share:
    /// the total still holds, and the newest keys are the ones kept.
    @Test func aLargeBoundIsKeptPerStripeAndHoldsInTotal() async throws {
        let partitions = partitions(capacity: 8_192)
        for index in 0..<20_000 { _ = try await increment(partitions, "key-\(index)", scope: nil) }
        #expect(partitions.count(in: 0) == 8_192, "every stripe saw more than its share of 1,024 keys")
        #expect(partitions.value("key-19999", in: 0) == 1)
        #expect(partitions.value("key-0", in: 0) == nil)
        // Concurrent updates of different keys (different stripes) each apply once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<64 { group.addTask { _ = try await increment(partitions, "key-\(19_936 + index)", scope: nil) } }
            try await group.waitForAll()
        }
        #expect((19_936..<20_000).allSatisfy { partitions.value("key-\($0)", in: 0) == 2 })
    }

    @Test func isSafeUnderConcurrentUpdates() async throws {
        let partitions = partitions()
        let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { try await increment(partitions, scope: nil) == nil } }
            return try await group.reduce(into: 0) { count, first in if first { count += 1 } }
        }
        #expect(firsts == 1)
        #expect(partitions.value("k", in: 0) == 200)
    }
}

/// The in-memory ``KeyedStateStore`` (tests, demos): one partition, whatever the scope's.
@Suite struct InMemoryKeyedStateStoreTests {
    @Test func keepsEveryScopeInOnePartitionAndHonoursItsCapacity() async throws {
        let store = KeyedStateStore<String>(inMemoryCapacity: 1)
        #expect(store.installedPartitions == [0])
        let scope = DeliveryScope(partition: 5)
        let seen = try await store.update("a", scope: scope) { current in ("A", current) }
        #expect(seen == nil && store.value(of: "a", in: 0) == nil)
        scope.settle(delivered: true)
        #expect(store.value(of: "a", in: 0) == "A")
        _ = try await store.update("b", scope: nil) { current in ("B", current) }
        #expect(store.keyCount(in: 0) == 1 && store.value(of: "a", in: 0) == nil)
        // Assignment hooks are no-ops for it.
        try await store.prepare([TopicPartition(topic: "t", partition: 3)], epoch: AssignmentEpoch(1))
        await store.release([TopicPartition(topic: "t", partition: 0)])
        #expect(store.installedPartitions == [0])
    }
}
