import Observability
import Synchronization

/// Outcomes of whole JWS verifications, keyed by the SHA-256 of the exact JWS bytes and the kind
/// of payload decoded, owned by one ``SignedDataVerifier`` (so by one policy: anchors, bundle ids,
/// environments, limits). Apps re-send the same `jwsRepresentation` on every launch; a hit skips
/// the ECDSA verification, the JSON parse and the decoding.
///
/// Only outcomes that cannot change are stored: the caller leaves out any verification that read
/// the clock (a payload without `signedDate`, checked at the current time), valid or not. Bounded
/// to `capacity` entries, least recently used evicted first; an evicted entry only costs a
/// verification.
final class VerifiedJWSCache: Sendable {
    /// What a JWS was verified as (the same bytes decode to a different type per entry point).
    enum Kind: UInt8, Sendable {
        case transaction, renewalInfo, notification
    }

    /// SHA-256 of the JWS bytes plus the kind.
    struct Key: Hashable, Sendable {
        let digest: (UInt64, UInt64, UInt64, UInt64)
        let kind: Kind

        private init(digest: (UInt64, UInt64, UInt64, UInt64), kind: Kind) {
            self.digest = digest
            self.kind = kind
        }

        /// The key of `jws` and, when it has at least two dots, its signing input's digest, from
        /// one pass over its bytes: a miss then verifies the signature without hashing them again.
        static func withSigningInput(_ bytes: UnsafeBufferPointer<UInt8>, kind: Kind) -> (key: Key, signingInput: SigningInputDigest?) {
            var whole = SigningInputDigest.Words(0, 0, 0, 0), prefix = SigningInputDigest.Words(0, 0, 0, 0)
            let base = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
            if let length = SigningInputDigest.signingInputLength(bytes) {
                withUnsafeMutableBytes(of: &whole) { wholeOut in
                    withUnsafeMutableBytes(of: &prefix) { prefixOut in
                        SHA256Digest.hash(base, count: bytes.count, prefix: length,
                                          into: wholeOut.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                          prefixInto: prefixOut.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
                return (Key(digest: whole, kind: kind), SigningInputDigest(length: length, words: prefix))
            }
            withUnsafeMutableBytes(of: &whole) { out in
                SHA256Digest.hash(base, count: bytes.count, into: out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            return (Key(digest: whole, kind: kind), nil)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.kind == rhs.kind && lhs.digest.0 == rhs.digest.0 && lhs.digest.1 == rhs.digest.1
                && lhs.digest.2 == rhs.digest.2 && lhs.digest.3 == rhs.digest.3
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(digest.0)
            hasher.combine(kind)
        }
    }

    /// Lookups answered from the cache and lookups that were not.
    var statistics: (hits: Int, misses: Int) { (hitCount.load(ordering: .relaxed), missCount.load(ordering: .relaxed)) }

    /// Entries held now.
    var count: Int { table.withLock { $0.index.count } }

    private let table: Mutex<LRUTable>
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    /// - Parameter capacity: entries kept (at least 1).
    init(capacity: Int) {
        table = Mutex(LRUTable(capacity: max(1, capacity)))
    }

    /// The stored outcome of `key`, marking it recently used.
    func value(for key: Key) -> (any Sendable)? {
        let value = table.withLock { $0.value(for: key) }
        if value == nil { missCount.add(1, ordering: .relaxed) } else { hitCount.add(1, ordering: .relaxed) }
        return value
    }

    /// Stores an outcome, evicting the least recently used entry when full.
    func insert(_ value: any Sendable, for key: Key) {
        table.withLock { $0.insert(value, for: key) }
    }
}

/// A fixed-capacity LRU map: nodes in arrays linked by index (no per-entry allocation besides
/// the value), with a dictionary from key to node.
private struct LRUTable: Sendable {
    private struct Node: Sendable {
        var key: VerifiedJWSCache.Key
        var value: any Sendable
        var newer: Int
        var older: Int
    }

    let capacity: Int
    private(set) var index: [VerifiedJWSCache.Key: Int] = [:]
    private var nodes: [Node] = []
    /// Most and least recently used node, -1 when empty.
    private var newest = -1
    private var oldest = -1

    init(capacity: Int) {
        self.capacity = capacity
        index.reserveCapacity(min(capacity, 65_536))
    }

    mutating func value(for key: VerifiedJWSCache.Key) -> (any Sendable)? {
        guard let node = index[key] else { return nil }
        touch(node)
        return nodes[node].value
    }

    mutating func insert(_ value: any Sendable, for key: VerifiedJWSCache.Key) {
        if let node = index[key] {
            nodes[node].value = value
            touch(node)
            return
        }
        let node: Int
        if nodes.count < capacity {
            node = nodes.count
            nodes.append(Node(key: key, value: value, newer: -1, older: -1))
        } else {
            node = oldest
            unlink(node)
            index[nodes[node].key] = nil
            nodes[node].key = key
            nodes[node].value = value
        }
        index[key] = node
        linkAsNewest(node)
    }

    private mutating func touch(_ node: Int) {
        guard node != newest else { return }
        unlink(node)
        linkAsNewest(node)
    }

    private mutating func unlink(_ node: Int) {
        let (newer, older) = (nodes[node].newer, nodes[node].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[node].newer = -1
        nodes[node].older = -1
    }

    private mutating func linkAsNewest(_ node: Int) {
        nodes[node].older = newest
        nodes[node].newer = -1
        if newest >= 0 { nodes[newest].newer = node }
        newest = node
        if oldest < 0 { oldest = node }
    }
}
