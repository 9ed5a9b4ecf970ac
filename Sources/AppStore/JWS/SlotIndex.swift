/// The verified-JWS cache's index from a key's hash to its node: linear probing over a
/// power-of-two array of words, each the top half of an entry's 64-bit hash (its tag) and its node
/// number plus one (0: empty). The keys are SHA-256 digests, already uniform, so the caller's hash
/// is one multiplication (``VerifiedJWSCache/Key/mixed(with:)``), not a SipHash. Probes compare
/// tags before touching a node, and removal shifts later entries back instead of leaving
/// tombstones. A tag's top bits pick the home slot, so the slots stop at 2^32 (the cache allows
/// 10 million entries).
struct SlotIndex: Sendable {
    private var slots: [UInt64]
    private var bits: Int
    let seed: UInt64
    /// Entries held.
    private(set) var count = 0

    /// Room for `expected` entries at most half full.
    init(expected: Int, seed: UInt64) {
        self.seed = seed
        bits = max(4, Int.bitWidth - (max(1, expected) * 2 - 1).leadingZeroBitCount)
        slots = Array(repeating: 0, count: 1 << bits)
    }

    private var mask: Int { (1 << bits) - 1 }

    /// Slots allocated (tests).
    var slotCount: Int { slots.count }

    private func home(ofTag tag: UInt64) -> Int { Int(truncatingIfNeeded: tag >> (32 - UInt64(bits))) }

    /// The first node under `hash` for which `matches` holds.
    func first(hash: UInt64, where matches: (Int) -> Bool) -> Int? {
        let tag = hash >> 32
        var slot = home(ofTag: tag)
        while true {
            let entry = slots[slot]
            if entry == 0 { return nil }
            if entry >> 32 == tag, matches(Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1) {
                return Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
            }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `node` under `hash` (not present yet), first doubling the slots if it would fill more
    /// than half of them.
    mutating func insert(_ node: Int, hash: UInt64) {
        if (count + 1) * 2 > slots.count { grow() }
        let tag = hash >> 32
        var slot = home(ofTag: tag)
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = tag << 32 | UInt64(node + 1)
        count += 1
    }

    /// Removes the entry under `hash` whose node `matches`, moving back the entries after it
    /// that probed past it, so every entry stays reachable from its home slot.
    mutating func remove(_ hash: UInt64, where matches: (Int) -> Bool) {
        let tag = hash >> 32
        var hole = home(ofTag: tag)
        while true {
            let entry = slots[hole]
            if entry == 0 { return }
            if entry >> 32 == tag, matches(Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1) { break }
            hole = (hole + 1) & mask
        }
        count -= 1
        var next = hole
        while true {
            next = (next + 1) & mask
            let entry = slots[next]
            if entry == 0 { break }
            let home = home(ofTag: entry >> 32)
            // The entry may fill the hole unless its home lies cyclically in (hole, next].
            let stays = hole < next ? (home > hole && home <= next) : (home > hole || home <= next)
            if !stays {
                slots[hole] = entry
                hole = next
            }
        }
        slots[hole] = 0
    }

    /// Doubles the slots and places every entry again.
    private mutating func grow() {
        var grown = Self(expected: slots.count, seed: seed)
        for entry in slots where entry != 0 {
            var slot = grown.home(ofTag: entry >> 32)
            while grown.slots[slot] != 0 { slot = (slot + 1) & grown.mask }
            grown.slots[slot] = entry
        }
        grown.count = count
        self = grown
    }
}
