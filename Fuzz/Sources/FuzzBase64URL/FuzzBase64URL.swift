// fuzz-max-len: 4096
import Foundation
@_spi(Fuzzing) import AppStore
import FuzzSupport

/// The strict base64url codec of JWS segments.
///
/// Invariants: the decoder accepts only canonical text (decoding then encoding gives the input
/// back, so every byte string has exactly one accepted encoding), and any bytes survive an
/// encode/decode round trip.
let target = FuzzTarget(name: "FuzzBase64URL", seeds: base64Seeds) { input in
    if let decoded = FuzzingEntryPoints.decodeBase64URL(input) {
        fuzzCheck(Array(FuzzingEntryPoints.encodeBase64URL(decoded).utf8) == Array(input),
                  "accepted a non-canonical encoding: \(String(decoding: input.prefix(100), as: UTF8.self))")
    }
    let encoded = Array(FuzzingEntryPoints.encodeBase64URL(Array(input)).utf8)
    let roundTrip = encoded.withUnsafeBufferPointer { FuzzingEntryPoints.decodeBase64URL($0) }
    fuzzCheck(roundTrip == Array(input), "encode/decode round trip failed for \(input.count) bytes")
}

func base64Seeds() -> [FuzzSeed] {
    var seeds = [FuzzSeed("empty", [])]
    for (index, segment) in FuzzFixtures.segments(FuzzFixtures.cliValidJWS).enumerated() {
        seeds.append(FuzzSeed("cli-valid-segment-\(index)", text: segment))
    }
    let edgeCases = ["QQ", "QR", "QUI", "QUJ", "QUJD", "QUJD=", "QUJD+/", "Q", "____", "----", "A A=", "AAAA\n"]
    seeds += edgeCases.enumerated().map { FuzzSeed("edge-\($0.offset)", text: $0.element) }
    seeds.append(FuzzSeed("binary", (0...255).map { UInt8($0) }))
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
