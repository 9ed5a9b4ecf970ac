/// The batched ES256 checks against OpenSSL's one-at-a-time verdicts, for `FuzzES256Batch`.
extension FuzzingEntryPoints {
    /// Size of one check in ``es256BatchDisagreement(_:)``'s input.
    public static let es256CheckSize = 98

    /// Two P-256 keys made once per process (the fuzzer mutates around their genuine signatures).
    private static let es256Keys: [EVPKey] = (0..<2).compactMap { _ in try? EVPKey.generateEC() }

    /// Runs the checks `bytes` describes together (``P256BatchVerification``, as a verify round
    /// does) and one at a time (`EVP_PKEY_verify`), and compares the verdicts. Each 98 bytes are a
    /// check: a flags byte, then r, s and the digest (32 bytes each, big-endian), then a key byte.
    /// Flags bit 0: the signature is the harness's own over the digest with the key, r and s then
    /// XORed with the given bytes (all zero: genuine); bit 1: verified with the other key.
    /// - Returns: nil when the two agree on every check (and a genuine one passes), else which differs.
    public static func es256BatchDisagreement(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard es256Keys.count == 2 else { return "could not make the keys" }
        var checks: [P256BatchVerification.Check] = [], alone: [Bool] = [], genuine: [Bool] = []
        var start = 0
        while start + es256CheckSize <= bytes.count {
            let block = Array(bytes[start..<(start + es256CheckSize)])
            start += es256CheckSize
            let flags = block[0], signer = es256Keys[Int(block[97]) % 2]
            let verifier = flags & 2 == 0 ? signer : es256Keys[(Int(block[97]) + 1) % 2]
            let digest = Array(block[65..<97])
            var r = Array(block[1..<33]), s = Array(block[33..<65])
            if flags & 1 != 0 {
                guard let der = try? digest.withUnsafeBytes({ try signer.sign(digest: $0) }),
                      let raw = ES256.rawFromDER(der) else { return "could not sign" }
                for index in 0..<32 {
                    r[index] ^= raw[index]
                    s[index] ^= raw[32 + index]
                }
            }
            guard let point = verifier.p256Point else { return "a P-256 key without a point" }
            checks.append(P256BatchVerification.Check(point: point, r: P256BatchVerification.words(r), s: P256BatchVerification.words(s),
                                                      digest: P256BatchVerification.words(digest)))
            alone.append((r + s).withUnsafeBytes { raw in digest.withUnsafeBytes { verifier.verify(rawES256Signature: raw, digest: $0) } })
            genuine.append(flags & 3 == 1 && block[1..<65].allSatisfy { $0 == 0 })
        }
        guard let together = P256BatchVerification.verify(checks) else { return "OpenSSL failed the batch" }
        for index in checks.indices {
            if together[index] != alone[index] {
                return "check \(index): together \(together[index]), alone \(alone[index])"
            }
            if genuine[index] && !together[index] { return "check \(index): a genuine signature failed" }
        }
        return nil
    }
}
