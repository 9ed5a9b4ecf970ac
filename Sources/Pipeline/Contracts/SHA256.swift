/// SHA-256 (FIPS 180-4) in pure Swift.
///
/// The pipeline needs digests in two places: `payloadSHA256` (so logs and rejections can name a
/// payload without carrying it) and the deterministic `eventId` of entitlement changes. Both are
/// computed in modules that must not link OpenSSL, so this small, dependency-free implementation
/// lives here. It is not constant-time and is not meant for secrets.
public struct SHA256: Sendable {
    /// Size of a digest in bytes.
    public static let digestByteCount = 32

    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var state: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    /// Bytes not yet forming a whole 64-byte block.
    private var pending: [UInt8] = []
    private var totalByteCount: UInt64 = 0

    /// Starts an empty hash.
    public init() {
        pending.reserveCapacity(64)
    }

    /// Feeds more bytes into the hash.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update(rawBuffer: $0) }
    }

    /// Feeds the UTF-8 encoding of `string` into the hash.
    public mutating func update(_ string: String) {
        update(Array(string.utf8))
    }

    private mutating func update(rawBuffer buffer: UnsafeRawBufferPointer) {
        totalByteCount &+= UInt64(buffer.count)
        var index = 0
        if !pending.isEmpty {
            let take = Swift.min(64 - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<take])
            index = take
            if pending.count == 64 {
                let block = pending
                block.withUnsafeBytes { compress($0) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while buffer.count - index >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: buffer[index..<(index + 64)]))
            index += 64
        }
        if index < buffer.count {
            pending.append(contentsOf: buffer[index...])
        }
    }

    /// Pads, processes the last block(s) and returns the 32-byte digest. The hash must not be
    /// updated afterwards (start a new ``SHA256`` instead).
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalByteCount &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        tail.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                compress(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + 64)]))
                offset += 64
            }
        }
        pending.removeAll()
        var digest: [UInt8] = []
        digest.reserveCapacity(SHA256.digestByteCount)
        for word in state {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lowercase hexadecimal digest of `bytes` (64 characters), the form used in contracts.
    public static func hexDigest(_ bytes: [UInt8]) -> String {
        Hex.encode(hash(bytes))
    }

    /// The lowercase hexadecimal digest of the UTF-8 encoding of `string`.
    public static func hexDigest(_ string: String) -> String {
        hexDigest(Array(string.utf8))
    }

    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 {
                let b = 4 * i
                w[i] = UInt32(block[b]) << 24 | UInt32(block[b + 1]) << 16 | UInt32(block[b + 2]) << 8 | UInt32(block[b + 3])
            }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var a = state[0], b = state[1], c = state[2], d = state[3]
            var e = state[4], f = state[5], g = state[6], h = state[7]
            SHA256.roundConstants.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                    let choose = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ choose &+ k[i] &+ w[i]
                    let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ majority
                    h = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ t2
                }
            }
            state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
            state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
        }
    }
}

@inline(__always)
private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
    (x >> n) | (x << (32 - n))
}
