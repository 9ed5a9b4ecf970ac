import MutationTesting
import Testing
@testable import AppStore

/// The verified-JWS cache's open-addressing index and the LRU table over it, against the obvious
/// models (a dictionary, an ordered array), with hashes narrow enough that entries collide, runs
/// wrap around the end of the slots, and removals have later entries to move back (seeded, so a
/// failure replays).
@Suite struct SlotIndexTests {
    @Test(arguments: [1, 2, 3])
    func insertsFindsAndRemovesLikeADictionaryUnderCollisions(_ seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var index = SlotIndex(expected: 40, seed: 0)
        var model: [Int: UInt64] = [:]  // node → hash
        var free = Array(0..<40)
        var lost = 0, phantom = 0, grew = 0  // counted, not expected one by one: a broken index fails thousands of times
        for _ in 0..<20_000 {
            if !free.isEmpty, model.isEmpty || random.next() % 2 == 0 {
                let node = free.remove(at: Int(random.next() % UInt64(free.count)))
                // Eight distinct tags (the top half) over 128 slots: long runs, many equal tags.
                let hash = (random.next() % 8) << 61 | random.next() & 0xFFFF_FFFF
                index.insert(node, hash: hash)
                model[node] = hash
                // Never more than 40 entries, so never more than 128 slots: entries a removal
                // failed to find would pile up and make the index grow.
                if index.slotCount != 128 { grew += 1 }
            } else {
                let node = Array(model.keys)[Int(random.next() % UInt64(model.count))]
                index.remove(model[node]!) { $0 == node }
                model[node] = nil
                free.append(node)
            }
            for (node, hash) in model where index.first(hash: hash, where: { $0 == node }) != node { lost += 1 }
            for node in free.prefix(3) where index.first(hash: random.next(), where: { $0 == node }) != nil { phantom += 1 }
        }
        #expect(lost == 0)
        #expect(phantom == 0)
        #expect(grew == 0)
    }

    @Test func growingKeepsEveryEntryReachable() {
        var index = SlotIndex(expected: 4, seed: 0)
        var random = SeededGenerator(seed: 9)
        var hashes: [UInt64] = []
        for node in 0..<1_000 {
            let hash = random.next()
            index.insert(node, hash: hash)
            hashes.append(hash)
        }
        for (node, hash) in hashes.enumerated() {
            #expect(index.first(hash: hash) { $0 == node } == node)
        }
    }

    /// The cache over many keys and a small capacity: the same hits, misses and evictions as an
    /// array kept in recency order.
    @Test(arguments: [1, 2, 7, 64])
    func theCacheEvictsLikeAnOrderedList(_ capacity: Int) {
        let cache = VerifiedJWSCache(capacity: capacity)
        var random = SeededGenerator(seed: UInt64(capacity))
        let keys = (0..<(capacity * 3)).map { number in
            Array("jws \(number)".utf8).withUnsafeBufferPointer {
                VerifiedJWSCache.Key.withSigningInput($0, kind: number % 2 == 0 ? .transaction : .notification).key
            }
        }
        var model: [Int] = []  // most recent last
        var disagreements = 0
        for _ in 0..<5_000 {
            let number = Int(random.next() % UInt64(keys.count))
            let cached = cache.value(for: keys[number]) as? Int
            if let position = model.firstIndex(of: number) {
                if cached != number { disagreements += 1 }
                model.remove(at: position)
            } else {
                if cached != nil { disagreements += 1 }
                cache.insert(number, for: keys[number])
                if model.count == capacity { model.removeFirst() }
            }
            model.append(number)
            if cache.count != model.count { disagreements += 1 }
        }
        #expect(disagreements == 0)
    }

    /// Two threads that missed the same JWS both insert it: the second replaces the first's value
    /// and makes the entry the newest, without a second entry.
    @Test func insertingAPresentKeyReplacesItsValueAndRefreshesIt() {
        let cache = VerifiedJWSCache(capacity: 3)
        let keys = ["a", "b", "c", "d"].map { name in
            Array(name.utf8).withUnsafeBufferPointer { VerifiedJWSCache.Key.withSigningInput($0, kind: .transaction).key }
        }
        cache.insert(1, for: keys[0])
        cache.insert(2, for: keys[1])
        cache.insert(10, for: keys[0])  // present: replaced, and now newer than b
        #expect(cache.count == 2)
        cache.insert(3, for: keys[2])
        cache.insert(4, for: keys[3])  // full: evicts b, the least recently used
        #expect(cache.count == 3)
        #expect(cache.value(for: keys[1]) == nil)
        #expect(cache.value(for: keys[0]) as? Int == 10)
        #expect(cache.value(for: keys[2]) as? Int == 3)
        #expect(cache.value(for: keys[3]) as? Int == 4)
    }
}
