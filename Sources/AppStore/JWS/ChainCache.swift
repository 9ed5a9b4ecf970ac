import Foundation
import Synchronization

/// A bounded, thread-safe cache from a JWS header segment (its exact base64url bytes, which embed
/// the whole `x5c`) to the outcome of checking that header and its chain.
///
/// Only message-independent facts are cached. A chain enters the verified table only after the
/// message that brought it had a valid signature under its leaf key, so forgeries that reuse a
/// genuine `x5c` under a new header cannot flood out genuine entries.
///
/// Successes and failures live in separate FIFO-evicted tables so that a flood of forged headers
/// can only evict other failures, never the verified Apple chains. Entries are found by a seeded
/// 64-bit hash of the header bytes and confirmed by comparing the bytes, so a hash collision is a
/// miss, never a wrong answer. The hash and the comparison run outside the lock; the lock only
/// covers dictionary access.
final class ChainCache: Sendable {
    /// A cached header outcome.
    enum Outcome: Sendable {
        case verified(VerifiedChain)
        case rejected(VerificationError)
    }

    private struct Entry: Sendable {
        let header: [UInt8]
        let outcome: Outcome
    }

    private struct Table: Sendable {
        let capacity: Int
        var entries: [Int: Entry] = [:]
        var order: [Int] = []
        var cursor = 0

        init(capacity: Int) {
            self.capacity = capacity
            entries.reserveCapacity(capacity)
            order.reserveCapacity(capacity)
        }

        mutating func insert(_ entry: Entry, key: Int) {
            if entries.updateValue(entry, forKey: key) != nil { return }
            if order.count < capacity {
                order.append(key)
                return
            }
            entries.removeValue(forKey: order[cursor])
            order[cursor] = key
            cursor = (cursor + 1) % capacity
        }
    }

    private let verified: Mutex<Table>
    private let rejected: Mutex<Table>

    /// Creates an empty cache.
    /// - Parameters:
    ///   - capacity: Maximum number of verified chains kept.
    ///   - failureCapacity: Maximum number of rejected headers kept.
    init(capacity: Int, failureCapacity: Int) {
        verified = Mutex(Table(capacity: max(1, capacity)))
        rejected = Mutex(Table(capacity: max(1, failureCapacity)))
    }

    /// Per-process random seed of ``key(for:)``.
    private static let seed = UInt64.random(in: .min ... .max)

    /// The lookup key of a header segment: a fast seeded 64-bit multiply-xorshift hash over all
    /// bytes (SipHash over 4 KB per message cost more than everything else outside OpenSSL).
    /// Collisions only cost a miss: entries are confirmed by comparing bytes, and only headers whose
    /// chain verified (after a valid message signature) can enter the verified table.
    static func key(for header: UnsafeBufferPointer<UInt8>) -> Int {
        let raw = UnsafeRawBufferPointer(header)
        let multiplier: UInt64 = 0xFF51_AFD7_ED55_8CCD
        // Four independent lanes over 32-byte blocks keep the multiplier pipeline busy.
        var lanes = (seed, seed ^ 0x9E37_79B9_7F4A_7C15, seed ^ 0xC4CE_B9FE_1A85_EC53, seed ^ UInt64(raw.count))
        var offset = 0
        while offset + 32 <= raw.count {
            lanes.0 = (lanes.0 ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* multiplier
            lanes.1 = (lanes.1 ^ raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)) &* multiplier
            lanes.2 = (lanes.2 ^ raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)) &* multiplier
            lanes.3 = (lanes.3 ^ raw.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)) &* multiplier
            lanes.0 ^= lanes.0 >> 32
            lanes.1 ^= lanes.1 >> 32
            lanes.2 ^= lanes.2 >> 32
            lanes.3 ^= lanes.3 >> 32
            offset += 32
        }
        var hash = lanes.0 ^ (lanes.1 &* 0x9E37_79B9_7F4A_7C15) ^ (lanes.2 &* 0xC4CE_B9FE_1A85_EC53) ^ (lanes.3 &* multiplier)
        while offset < raw.count {
            hash = (hash ^ UInt64(raw[offset])) &* multiplier
            offset += 1
        }
        hash ^= hash >> 29
        hash = hash &* 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 32
        return Int(truncatingIfNeeded: hash)
    }

    /// The cached outcome for a header, if any.
    func lookup(key: Int, header: UnsafeBufferPointer<UInt8>) -> Outcome? {
        if let entry = verified.withLock({ $0.entries[key] }), Self.same(entry.header, header) { return entry.outcome }
        if let entry = rejected.withLock({ $0.entries[key] }), Self.same(entry.header, header) { return entry.outcome }
        return nil
    }

    /// Records the outcome for a header, evicting the oldest entry of its table when full.
    func store(key: Int, header: UnsafeBufferPointer<UInt8>, outcome: Outcome) {
        let entry = Entry(header: Array(header), outcome: outcome)
        switch outcome {
        case .verified: verified.withLock { $0.insert(entry, key: key) }
        case .rejected: rejected.withLock { $0.insert(entry, key: key) }
        }
    }

    /// Number of cached verified chains and rejected headers.
    var counts: (verified: Int, rejected: Int) {
        (verified.withLock { $0.entries.count }, rejected.withLock { $0.entries.count })
    }

    private static func same(_ stored: [UInt8], _ header: UnsafeBufferPointer<UInt8>) -> Bool {
        stored.withUnsafeBufferPointer { lhs in
            lhs.count == header.count && (lhs.count == 0 || memcmp(lhs.baseAddress!, header.baseAddress!, lhs.count) == 0)
        }
    }
}
