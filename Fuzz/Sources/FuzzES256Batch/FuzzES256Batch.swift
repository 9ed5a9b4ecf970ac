// fuzz-max-len: 6272
import Foundation
@_spi(Fuzzing) import AppStore
import FuzzSupport

/// ES256 checks run together, as a verify round runs them (`P256BatchVerification`: one inversion
/// for the batch, x compared in Jacobian coordinates), against OpenSSL's `EVP_PKEY_verify` one at
/// a time. Input: up to 64 checks of 98 bytes (``FuzzingEntryPoints/es256BatchDisagreement(_:)``),
/// each a flags byte, r, s, a digest and a key byte; a flagged check is the harness's own signature
/// with r and s XORed by the given bytes, so mutations land around genuine signatures as well as
/// on arbitrary ones (zero, n and above, high s).
///
/// Invariants: every verdict equals OpenSSL's, and a genuine signature passes.
let target = FuzzTarget(name: "FuzzES256Batch", seeds: batchSeeds) { input in
    if let disagreement = FuzzingEntryPoints.es256BatchDisagreement(input) {
        fuzzCheck(false, "batched ES256 disagrees with EVP_PKEY_verify: \(disagreement)")
    }
}

func batchSeeds() -> [FuzzSeed] {
    let size = FuzzingEntryPoints.es256CheckSize
    /// A check: flags, r (or the XOR mask), s (or mask), digest byte, key byte.
    func check(_ flags: UInt8, r: [UInt8] = [UInt8](repeating: 0, count: 32), s: [UInt8] = [UInt8](repeating: 0, count: 32),
               digest: UInt8, key: UInt8) -> [UInt8] {
        let block = [flags] + r + s + [UInt8](repeating: digest, count: 32) + [key]
        precondition(block.count == size)
        return block
    }
    let order: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                          0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51]
    let one = [UInt8](repeating: 0, count: 31) + [1]
    var bitFlip = [UInt8](repeating: 0, count: 32)
    bitFlip[31] = 1
    return [
        FuzzSeed("genuine-pair", check(1, digest: 1, key: 0) + check(1, digest: 2, key: 1)),
        FuzzSeed("genuine-and-altered", check(1, digest: 3, key: 0) + check(1, r: bitFlip, digest: 4, key: 0)
            + check(1, s: bitFlip, digest: 5, key: 1) + check(3, digest: 6, key: 1)),
        FuzzSeed("out-of-range", check(0, r: order, s: one, digest: 7, key: 0) + check(0, r: one, s: order, digest: 8, key: 1)
            + check(0, digest: 9, key: 0) + check(1, digest: 10, key: 1)),
        FuzzSeed("arbitrary", check(0, r: one, s: one, digest: 11, key: 0) + check(0, r: bitFlip, s: one, digest: 12, key: 1)),
        FuzzSeed("sixteen-genuine", (0..<16).flatMap { check(1, digest: UInt8(20 + $0), key: UInt8($0 % 2)) }),
    ]
}

/// libFuzzer calls this once before the first input (see ``FuzzTarget/initialize()``).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    target.initialize()
}

/// libFuzzer calls this for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target.run(data, size)
}
