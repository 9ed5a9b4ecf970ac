import COpenSSL
import Synchronization

/// SHA-256 states after the leading whole blocks of a few recently hashed JWS headers. Every JWS
/// one Apple leaf signs starts with the same header, its `x5c` chain: about three quarters of the
/// bytes that ingest (`payloadSHA256`), the verified-JWS cache's key and the signature's digest
/// each hash. A digest that starts from the remembered state of bytes equal to its own first
/// bytes is the digest of the whole, so only the rest is hashed.
///
/// An input is looked up only when it has a dot within ``maxHeaderBytes`` and at least
/// ``minRememberedBytes`` before it; the bytes up to the last whole 64-byte block before that dot
/// must equal a remembered prefix exactly. A miss hashes them and remembers their state, in place
/// of an entry not used since the last replacement (a second chance), so a stream of one-off
/// headers cannot push out the header every genuine JWS shares.
final class SHA256PrefixStates: Sendable {
    /// Inputs whose first dot lies further in are hashed from the start (Apple's headers are
    /// about 3.3 KB; a receipt has no dot and is not scanned past this).
    static let maxHeaderBytes = 8_192
    /// Shorter prefixes save too little to be worth a lookup.
    static let minRememberedBytes = 256

    private final class Entry: Sendable {
        let prefix: [UInt8]
        let state: SHA256_CTX
        /// Set by each hit, cleared when a replacement passes over the entry.
        let used = Atomic<Bool>(true)

        init(prefix: [UInt8], state: SHA256_CTX) {
            self.prefix = prefix
            self.state = state
        }
    }

    private struct Table {
        var entries: [Entry] = []
        var hand = 0
    }

    private let capacity: Int
    private let table = Mutex(Table())

    init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    /// A context that has absorbed the first `absorbed` bytes of `bytes` (none when no prefix
    /// applies), `bytes` being at least `count` long.
    func start(_ bytes: UnsafeRawPointer, count: Int) -> (context: SHA256_CTX, absorbed: Int) {
        var context = SHA256_CTX()
        COpenSSL_SHA256_Init(&context)
        let scanned = min(count, Self.maxHeaderBytes)
        guard let dot = memchr(bytes, 0x2E, scanned) else { return (context, 0) }
        let length = (bytes.distance(to: UnsafeRawPointer(dot)) / 64) * 64
        guard length >= Self.minRememberedBytes else { return (context, 0) }
        let entries = table.withLock { $0.entries }
        for entry in entries where entry.prefix.count == length {
            let equal = entry.prefix.withUnsafeBytes { memcmp($0.baseAddress!, bytes, length) == 0 }
            if equal {
                if !entry.used.load(ordering: .relaxed) { entry.used.store(true, ordering: .relaxed) }
                return (entry.state, length)
            }
        }
        COpenSSL_SHA256_Update(&context, bytes, length)
        remember(Entry(prefix: Array(UnsafeRawBufferPointer(start: bytes, count: length)), state: context))
        return (context, length)
    }

    /// Prefixes remembered now.
    var count: Int { table.withLock { $0.entries.count } }

    private func remember(_ entry: Entry) {
        table.withLock { table in
            if table.entries.contains(where: { $0.prefix == entry.prefix }) { return }  // another thread's miss
            guard table.entries.count >= capacity else {
                table.entries.append(entry)
                return
            }
            while table.entries[table.hand].used.exchange(false, ordering: .relaxed) {
                table.hand = (table.hand + 1) % table.entries.count
            }
            table.entries[table.hand] = entry
            table.hand = (table.hand + 1) % table.entries.count
        }
    }
}
