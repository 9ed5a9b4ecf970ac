// fuzz-max-len: 16384 (decoded Apple notification payloads, the largest seeds, are about 13 KB)
// fuzz-dict: json.dict
import Foundation
@_spi(Fuzzing) import AppStore
import FuzzSupport

/// The strict JSON parser that reads JWS headers and payloads, directly (depth limit 16, the
/// verifier's default).
///
/// Invariants: a rejection is `invalid-json`, `duplicate-json-member` or `json-too-deep` with a
/// detail; whatever the strict parser accepts, Foundation's `JSONSerialization` accepts too (the
/// strict parser only ever narrows RFC 8259); the contracts' tape (`JSONTape`) accepts nothing
/// the parser refuses and reads what it accepts as the parser's tree.
let target = FuzzTarget(name: "FuzzJSON", seeds: jsonSeeds) { input in
    if let disagreement = FuzzingEntryPoints.tapeDisagreement(input, maxDepth: 16) {
        fuzzCheck(false, "\(disagreement): \(String(decoding: input.prefix(200), as: UTF8.self))")
    }
    if let error = FuzzingEntryPoints.parseStrictJSON(input, maxDepth: 16) {
        fuzzCheck(allowedReasons.contains(error.reason), "unexpected reason \(error.reason)")
        fuzzCheck(!error.detail.isEmpty, "rejection without detail")
    } else {
        let data = Data(buffer: input)
        fuzzCheck((try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil,
                  "strict parser accepted what Foundation rejects: \(String(decoding: input.prefix(200), as: UTF8.self))")
    }
}

let allowedReasons: Set<VerificationReason> = [.invalidJSON, .duplicateJSONMember, .jsonTooDeep]

func jsonSeeds() -> [FuzzSeed] {
    var seeds: [FuzzSeed] = []
    for (name, jws) in FuzzSamples.allJWS.map({ ($0.name, $0.text) }) {
        guard let decoded = FuzzSamples.decodedJSON(jws) else { continue }
        seeds.append(FuzzSeed("\(name)-header", decoded.header))
        seeds.append(FuzzSeed("\(name)-payload", decoded.payload))
    }
    seeds.append(FuzzSeed("submission", text: FuzzSamples.submission()))
    let edgeCases: [(String, String)] = [
        ("duplicate-member", #"{"a":1,"a":2}"#),
        ("duplicate-after-unescape", #"{"a":1,"\u0061":2}"#),
        ("too-deep", String(repeating: "[", count: 17) + String(repeating: "]", count: 17)),
        ("deepest-allowed", String(repeating: #"{"a":"#, count: 15) + "{}" + String(repeating: "}", count: 15)),
        ("lone-high-surrogate", #"["\ud800"]"#),
        ("lone-low-surrogate", #"["\udc00x"]"#),
        ("surrogate-pair", #"["\ud83d\ude00","é","\u00e9"]"#),
        ("escapes", #"{"s":"\"\\\/\b\f\n\r\t\u0000"}"#),
        ("numbers", "[0,-0,1.5,-1e-7,1E+3,9223372036854775807,-9223372036854775808,9223372036854775808,1e308,1e-400]"),
        ("number-overflow", "[1e400]"),
        ("leading-zero", "[01]"),
        ("trailing-comma", "[1,]"),
        ("literals", " [true , false,null ] "),
        ("scalar", "\"text\""),
        ("trailing-data", "{} {}"),
        ("bom", "\u{FEFF}{}"),
        ("control-character", "[\"a\u{1}b\"]"),
    ]
    seeds += edgeCases.map { FuzzSeed($0.0, text: $0.1) }
    seeds.append(FuzzSeed("invalid-utf8", [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D]))
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
