import COpenSSL
import Foundation
import MutationTesting
import Testing
@testable import AppStore

/// ES256 signatures verified together (``P256BatchVerification``) get exactly the verdict
/// OpenSSL's `EVP_PKEY_verify` gives each alone: genuine, altered, out-of-range and high-s
/// signatures from several keys mixed in one batch, and Apple's own signatures.
@Suite struct P256BatchVerificationTests {
    /// The P-256 group order n, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// One signature to check, as bytes, and the key it is checked with.
    struct Case {
        let name: String
        let key: EVPKey
        let r: [UInt8]
        let s: [UInt8]
        let digest: [UInt8]

        /// `EVP_PKEY_verify`'s verdict, the oracle.
        var alone: Bool {
            (r + s).withUnsafeBytes { raw in digest.withUnsafeBytes { key.verify(rawES256Signature: raw, digest: $0) } }
        }

        var check: P256BatchVerification.Check? {
            key.p256Point.map {
                P256BatchVerification.Check(point: $0, r: P256BatchVerification.words(r), s: P256BatchVerification.words(s),
                                            digest: P256BatchVerification.words(digest))
            }
        }
    }

    /// a − b for 32-byte big-endian numbers with a ≥ b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return result
    }

    /// a + b for 32-byte big-endian numbers, carry dropped.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), carry = 0
        for index in (0..<32).reversed() {
            let sum = Int(a[index]) + Int(b[index]) + carry
            result[index] = UInt8(sum % 256)
            carry = sum / 256
        }
        return result
    }

    static func flipping(_ bytes: [UInt8], bit: Int) -> [UInt8] {
        var copy = bytes
        copy[bit / 8 % 32] ^= 1 << UInt8(bit % 8)
        return copy
    }

    /// Genuine signatures of three keys, each also altered every way a verification must refuse,
    /// plus its high-s twin (r, n − s), which ECDSA accepts.
    static func cases(seed: UInt64) throws -> [Case] {
        var random = SeededGenerator(seed: seed)
        let keys = try (0..<3).map { _ in try EVPKey.generateEC() }
        let one = [UInt8](repeating: 0, count: 31) + [1], zero = [UInt8](repeating: 0, count: 32)
        var cases: [Case] = []
        for index in 0..<24 {
            let key = keys[index % keys.count], other = keys[(index + 1) % keys.count]
            let digest = SHA256Digest.hash((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
            let der = try digest.withUnsafeBytes { try key.sign(digest: $0) }
            let raw = try #require(ES256.rawFromDER(der))
            let r = Array(raw[0..<32]), s = Array(raw[32..<64])
            let bit = Int.random(in: 0..<256, using: &random)
            cases += [
                Case(name: "genuine \(index)", key: key, r: r, s: s, digest: digest),
                Case(name: "high s \(index)", key: key, r: r, s: subtract(order, s), digest: digest),
                Case(name: "r altered \(index)", key: key, r: flipping(r, bit: bit), s: s, digest: digest),
                Case(name: "s altered \(index)", key: key, r: r, s: flipping(s, bit: bit), digest: digest),
                Case(name: "digest altered \(index)", key: key, r: r, s: s, digest: flipping(digest, bit: bit)),
                Case(name: "other key \(index)", key: other, r: r, s: s, digest: digest),
                Case(name: "r plus n \(index)", key: key, r: add(r, order), s: s, digest: digest),
                Case(name: "s plus n \(index)", key: key, r: r, s: add(s, order), digest: digest),
            ]
            if index == 0 {
                cases += [
                    Case(name: "r zero", key: key, r: zero, s: s, digest: digest),
                    Case(name: "s zero", key: key, r: r, s: zero, digest: digest),
                    Case(name: "r is n", key: key, r: order, s: s, digest: digest),
                    Case(name: "s is n", key: key, r: r, s: order, digest: digest),
                    Case(name: "r and s one", key: key, r: one, s: one, digest: digest),
                    Case(name: "r and s all ones", key: key, r: [UInt8](repeating: 0xFF, count: 32),
                         s: [UInt8](repeating: 0xFF, count: 32), digest: digest),
                    Case(name: "s is n - 1", key: key, r: r, s: subtract(order, one), digest: digest),
                ]
            }
        }
        return cases
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aMixedBatchGivesEachSignatureOpenSSLsVerdict(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed &* 7919)
        let cases = try Self.cases(seed: seed).shuffled(using: &random)
        let checks = try cases.map { try #require($0.check) }
        guard let verdicts = P256BatchVerification.verify(checks) else { Issue.record("OpenSSL failed the batch"); return }
        #expect(verdicts.count == cases.count)
        for (verdict, check) in zip(verdicts, cases) {
            #expect(verdict == check.alone, "\(check.name)")
        }
        // Genuine and high-s signatures pass, everything else fails (so the oracle is not trivially agreeing).
        let passing = Set(zip(verdicts, cases).filter(\.0).map(\.1.name))
        #expect(passing == Set(cases.map(\.name).filter { $0.hasPrefix("genuine") || $0.hasPrefix("high s") }))
        #expect(passing.count == 48)
    }

    /// Batches on several threads at once share the curve and the keys' points (as a verify
    /// worker's concurrent rounds do), and each still gets OpenSSL's verdicts.
    @Test func batchesOnManyThreadsAtOnceGetTheSameVerdicts() async throws {
        let cases = try Self.cases(seed: 7)
        let checks = try cases.map { try #require($0.check) }
        let expected = cases.map(\.alone)
        let results = await withTaskGroup(of: [Bool]?.self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<5).allSatisfy { _ in P256BatchVerification.verify(checks) == expected } ? expected : nil }
            }
            return await group.reduce(into: [[Bool]?]()) { $0.append($1) }
        }
        #expect(results.count == 4)
        #expect(results.allSatisfy { $0 == expected })
        #expect(expected.filter { $0 }.count == 48)
    }

    @Test func aBatchOfOneAndAnEmptyBatch() throws {
        let cases = try Self.cases(seed: 4)
        for check in cases.prefix(8) {
            let one = try #require(check.check)
            #expect(P256BatchVerification.verify([one]) == [check.alone], "\(check.name)")
        }
        #expect(P256BatchVerification.verify([]) == [])
    }

    @Test func aBatchWithNoSignatureInRangeRejectsThemAll() throws {
        let outOfRange = try Self.cases(seed: 5).filter { ["r zero", "s zero", "r is n", "s is n", "r and s all ones"].contains($0.name) }
        #expect(outOfRange.count == 5)
        let checks = try outOfRange.map { try #require($0.check) }
        let verdicts = P256BatchVerification.verify(checks)
        #expect(verdicts == [false, false, false, false, false])
    }

    /// A signature whose u1·G + u2·Q is the point at infinity (r = −e/d mod n, which takes the
    /// private key d to make) is rejected. The batch refuses such a point before comparing x, since
    /// with Z = 0 the comparison X = r·Z² would hold for an X of 0; OpenSSL leaves a nonzero X
    /// there today, so this checks the verdict, not which of the two refused it.
    @Test func aSignatureLandingAtInfinityIsRejected() throws {
        let key = try EVPKey.generateEC()
        guard let context = BN_CTX_new() else { Issue.record("BN_CTX_new"); return }
        defer { BN_CTX_free(context) }
        var d: OpaquePointer?
        #expect(EVP_PKEY_get_bn_param(key.pointer, "priv", &d) == 1)
        defer { BN_free(d) }
        let n = try #require(BN_bin2bn(Self.order, 32, nil)), e = try #require(BN_new()), r = try #require(BN_new())
        defer { BN_free(n); BN_free(e); BN_free(r) }
        let one = [UInt8](repeating: 0, count: 31) + [1]
        var cases: [Case] = []
        for index in 0..<4 {
            let digest = SHA256Digest.hash(Array("infinity \(index)".utf8))
            // r = −e·d⁻¹ mod n: then u1 + u2·d = (e + r·d)·s⁻¹ = 0, so u1·G + u2·Q = (u1 + u2·d)·G = O.
            #expect(BN_bin2bn(digest, 32, e) != nil && BN_mod_inverse(r, d, n, context) != nil)
            #expect(BN_mod_mul(r, r, e, n, context) == 1 && BN_sub(r, n, r) == 1)
            var bytes = [UInt8](repeating: 0, count: 32)
            #expect(BN_bn2binpad(r, &bytes, 32) == 32)
            let s = index.isMultiple(of: 2) ? one : digest
            cases.append(Case(name: "at infinity \(index)", key: key, r: bytes, s: s, digest: digest))
        }
        let checks = try cases.map { try #require($0.check) }
        #expect(P256BatchVerification.verify(checks) == [false, false, false, false])
        #expect(cases.map(\.alone) == [false, false, false, false])
    }

    /// A ``SignatureBatch`` runs its P-256 checks together and any other key's alone (a P-384 key
    /// has no P-256 point), every verdict OpenSSL's.
    @Test func aSignatureBatchRunsOtherKeysOneByOne() throws {
        let cases = try Self.cases(seed: 6).prefix(16)
        let p384 = try EVPKey.generateEC(curve: "P-384")
        #expect(p384.p256Point == nil)
        let foreign = Case(name: "P-384 key", key: p384, r: cases[0].r, s: cases[0].s, digest: cases[0].digest)
        let all = Array(cases) + [foreign]
        let batch = SignatureBatch(capacity: all.count)
        for check in all {
            (check.r + check.s).withUnsafeBytes { raw in check.digest.withUnsafeBytes { batch.add(key: check.key, signature: raw, digest: $0) } }
        }
        batch.checkAll()
        for (index, check) in all.enumerated() {
            #expect(batch.passed(index) == check.alone, "\(check.name)")
        }
        #expect(batch.passed(0) && batch.passed(1) && !batch.passed(all.count - 1))
    }

    /// Apple's signatures (`../shared/vectors/apple/jws/`): each verifies in one batch with the
    /// others, and fails once its signing input is altered, as OpenSSL judges them alone.
    @Test func applesSignaturesVerifyInOneBatch() throws {
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        let directory = Vectors.directory.appendingPathComponent("apple/jws")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jws") }.sorted()
        #expect(files.count == 18)
        var cases: [Case] = []
        for file in files {
            let jws = try Vectors.text("apple/jws/\(file)").trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            #expect(parts.count == 3, "\(file)")
            let headerBytes = try #require(Base64URL.decode(parts[0]))
            let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
            let x5c = try #require(header["x5c"] as? [String])
            let leafDER = try #require(Data(base64Encoded: x5c[0]))
            let leaf = try X509Certificate(der: Array(leafDER))
            let key = try #require(EVPKey.publicKey(of: leaf))
            let signature = try #require(Base64URL.decode(parts[2]))
            #expect(signature.count == 64, "\(file)")
            let digest = SHA256Digest.hash(Array("\(parts[0]).\(parts[1])".utf8))
            let r = Array(signature[0..<32]), s = Array(signature[32..<64])
            cases.append(Case(name: file, key: key, r: r, s: s, digest: digest))
            cases.append(Case(name: "\(file), altered", key: key, r: r, s: s, digest: Self.flipping(digest, bit: 0)))
        }
        let checks = try cases.map { try #require($0.check) }
        guard let verdicts = P256BatchVerification.verify(checks) else { Issue.record("OpenSSL failed the batch"); return }
        #expect(verdicts.count == cases.count)
        for (verdict, check) in zip(verdicts, cases) {
            #expect(verdict == check.alone, "\(check.name)")
            #expect(verdict == !check.name.hasSuffix("altered"), "\(check.name)")
        }
    }
}
