// fuzz-max-len: 20480 (Apple's notifications, the largest seeds, are under 19 KB)
import Foundation
import AppStore
import FuzzSupport

/// The JWS verification path over arbitrary text: the input bytes, read as UTF-8 (invalid
/// sequences become U+FFFD), go to `SignedDataVerifier.verifyAndDecodeTransaction` of a verifier
/// trusting fixed test roots (see ``FuzzVerifier``).
///
/// Invariants: only a genuine JWS (one of the fixtures, byte for byte) verifies; every rejection
/// has a documented, final reason and a detail that does not echo the input.
let target = FuzzTarget(name: "FuzzJWS", seeds: jwsSeeds) { input in
    let jws = String(decoding: input, as: UTF8.self)
    let result = FuzzVerifier.verifier.verifyAndDecodeTransaction(jws)
    FuzzVerifier.check(result, jws: jws, validAllowed: FuzzFixtures.genuineJWS.contains(jws))
}

func jwsSeeds() -> [FuzzSeed] {
    let valid = FuzzFixtures.cliValidJWS
    let segments = FuzzFixtures.segments(valid)
    var seeds = FuzzSamples.allJWS.map { FuzzSeed($0.name, text: $0.text) }
    seeds += [
        FuzzSeed("malformed-two-segments", text: segments[0] + "." + segments[1]),
        FuzzSeed("malformed-four-segments", text: valid + ".AAAA"),
        FuzzSeed("padded-signature", text: valid + "=="),
        FuzzSeed("standard-base64-signature", text: segments[0] + "." + segments[1] + "." + segments[2]
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")),
        FuzzSeed("swapped-payload-signature", text: segments[0] + "." + segments[2] + "." + segments[1]),
        FuzzSeed("short-header", text: "eyJhbGciOiJFUzI1NiJ9." + segments[1] + "." + segments[2]),
    ]
    return seeds
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
