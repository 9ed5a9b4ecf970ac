import COpenSSL
import Foundation
import Testing
@testable import AppStore

/// Digests that start from a remembered JWS header state (``SHA256PrefixStates``) must be the
/// digests of the whole input: checked against OpenSSL's one-shot `EVP_Digest` for inputs that
/// hit, miss, nearly match a remembered header, or fall outside the rules (no dot, a dot too
/// early or too late), through both of ``SHA256Digest``'s entry points.
@Suite struct SHA256PrefixStatesTests {
    static func reference(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { input in
            _ = EVP_Digest(input.baseAddress, input.count, &digest, nil, EVP_sha256(), nil)
        }
        return digest
    }

    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { SHA256Digest.hash($0.baseAddress, count: $0.count, into: &digest) }
        return digest
    }

    /// The whole digest and the prefix digest of the branched entry point.
    static func branched(_ bytes: [UInt8], prefix: Int) -> (whole: [UInt8], prefix: [UInt8]) {
        var whole = [UInt8](repeating: 0, count: 32), head = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { SHA256Digest.hash($0.baseAddress!, count: $0.count, prefix: prefix, into: &whole, prefixInto: &head) }
        return (whole, head)
    }

    /// `header` bytes (no dot), a dot, `payload` bytes, a dot and a signature.
    static func jws(header: Int, payload: Int, seed: UInt8, flip: Int? = nil) -> [UInt8] {
        var bytes = (0..<header).map { UInt8(0x41 + (Int(seed) + $0 * 7) % 26) }
        if let flip, flip >= 0, flip < header { bytes[flip] ^= 0x20 }
        bytes.append(0x2E)
        bytes += (0..<payload).map { UInt8(0x61 + ($0 * 13 + Int(seed)) % 26) }
        bytes.append(0x2E)
        bytes += Array("c2lnbmF0dXJl".utf8)
        return bytes
    }

    @Test func knownAnswers() {
        #expect(Self.digest([]).map { String(format: "%02x", $0) }.joined()
            == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.digest(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test(arguments: [0, 63, 64, 255, 256, 257, 319, 320, 3_300, 8_191, 8_192, 9_000])
    func digestsAreThoseOfTheWholeInput(header: Int) {
        // First sight (a miss that remembers), second sight (a hit), a byte changed inside the
        // remembered blocks, then inside the partial block after them, then another payload.
        let inputs = [Self.jws(header: header, payload: 900, seed: 1), Self.jws(header: header, payload: 900, seed: 1),
                      Self.jws(header: header, payload: 900, seed: 1, flip: header / 2),
                      Self.jws(header: header, payload: 900, seed: 1, flip: header - 1),
                      Self.jws(header: header, payload: 17, seed: 9)]
        for bytes in inputs {
            #expect(Self.digest(bytes) == Self.reference(bytes), "header \(header)")
            let prefix = bytes.indices.filter { bytes[$0] == 0x2E }[1]  // the second dot: the signing input
            let (whole, head) = Self.branched(bytes, prefix: prefix)
            #expect(whole == Self.reference(bytes) && head == Self.reference(Array(bytes[..<prefix])), "header \(header)")
        }
    }

    @Test func inputsWithoutAHeaderAreHashedWhole() {
        let noDot = [UInt8](repeating: 0x51, count: 20_000)
        let late = [UInt8](repeating: 0x52, count: 9_000) + [0x2E] + [UInt8](repeating: 0x53, count: 100)
        for bytes in [noDot, late, [0x2E], Array("a.b.c".utf8)] {
            #expect(Self.digest(bytes) == Self.reference(bytes))
        }
    }

    /// Bounded: many one-off headers leave at most `capacity` states, and a header in use is
    /// found again (its digest right) after they went through.
    @Test func rememberedStatesStayBounded() {
        let states = SHA256PrefixStates(capacity: 3)
        var digest = [UInt8](repeating: 0, count: 32)
        func hash(_ bytes: [UInt8]) -> [UInt8] {
            bytes.withUnsafeBytes { input in
                var (context, absorbed) = states.start(input.baseAddress!, count: input.count)
                COpenSSL_SHA256_Update(&context, input.baseAddress! + absorbed, input.count - absorbed)
                COpenSSL_SHA256_Final(&digest, &context)
            }
            return digest
        }
        let common = Self.jws(header: 3_300, payload: 500, seed: 2)
        for seed in 0..<40 {
            let oneOff = Self.jws(header: 1_000 + seed * 64, payload: 300, seed: UInt8(seed))
            #expect(hash(oneOff) == Self.reference(oneOff))
            #expect(hash(common) == Self.reference(common))
            #expect(states.count <= 3)
        }
    }
}
