// fuzz-max-len: 16384 (decoded Apple notification payloads, the largest seeds, are about 13 KB)
// fuzz-dict: json.dict
import Foundation
import AppStore
import FuzzSupport

/// The JWS verification path with the header, payload and signature mutated independently and
/// already decoded (input format: ``SegmentedJWSInput``), so the fuzzer skips base64url: either
/// segments of the valid `cli/valid.jws` are replaced, or the payload is re-signed by the harness
/// PKI so mutated payloads reach the JSON, date, claims and nested-JWS checks.
///
/// Invariants: a replaced segment never verifies unless it re-encodes to the original bytes; a
/// payload the harness signed is never rejected for its signature or chain (for notifications:
/// unless the failure is a nested JWS's, whose detail starts with `data.`); every rejection is
/// documented and final with a detail that does not echo the input.
let target = FuzzTarget(name: "FuzzJWSSegments", seeds: segmentSeeds) { input in
    let parsed = SegmentedJWSInput(input)
    let (jws, signed) = parsed.jws()
    let verifier = FuzzVerifier.verifier
    let rejection: VerificationError?
    switch parsed.decoder {
    case .transaction:
        let result = verifier.verifyAndDecodeTransaction(jws)
        FuzzVerifier.check(result, jws: jws, validAllowed: signed)
        rejection = result.error
    case .renewalInfo:
        let result = verifier.verifyAndDecodeRenewalInfo(jws)
        FuzzVerifier.check(result, jws: jws, validAllowed: signed)
        rejection = result.error
    case .notification:
        let result = verifier.verifyAndDecodeNotification(jws)
        FuzzVerifier.check(result, jws: jws, validAllowed: signed)
        rejection = result.error
    }
    if parsed.resign, let rejection, FuzzVerifier.signatureAndChainReasons.contains(rejection.reason) {
        fuzzCheck(parsed.decoder == .notification && rejection.detail.hasPrefix("data."),
                  "a JWS signed by the harness was rejected: \(rejection)")
    }
}

func segmentSeeds() -> [FuzzSeed] {
    let valid = SegmentedJWSInput.validCLI
    var seeds = [FuzzSeed("cli-valid", valid.bytes)]
    var headerOnly = valid
    (headerOnly.replacePayload, headerOnly.replaceSignature) = (false, false)
    seeds.append(FuzzSeed("cli-header-only", headerOnly.bytes))
    var payloadOnly = valid
    (payloadOnly.replaceHeader, payloadOnly.replaceSignature) = (false, false)
    seeds.append(FuzzSeed("cli-payload-only", payloadOnly.bytes))
    var signatureOnly = valid
    (signatureOnly.replaceHeader, signatureOnly.replacePayload) = (false, false)
    seeds.append(FuzzSeed("cli-signature-only", signatureOnly.bytes))
    var extraHeader = valid
    extraHeader.header = Array(extraHeader.header.dropLast()) + Array(#","kid":"k1","typ":"JWT"}"#.utf8)
    seeds.append(FuzzSeed("cli-header-extra-members", extraHeader.bytes))

    func resigned(_ decoder: SegmentedJWSInput.Decoder, _ payload: [UInt8]) -> [UInt8] {
        SegmentedJWSInput(decoder: decoder, resign: true, payload: payload).bytes
    }
    seeds.append(FuzzSeed("resign-transaction", resigned(.transaction, Array(FuzzSamples.transactionJSON.utf8))))
    seeds.append(FuzzSeed("resign-renewal", resigned(.renewalInfo, Array(FuzzSamples.renewalJSON.utf8))))
    for (name, json) in FuzzSamples.notificationJSONs {
        seeds.append(FuzzSeed("resign-\(name)", resigned(.notification, Array(json.utf8))))
    }
    if let cli = FuzzSamples.decodedJSON(FuzzFixtures.cliValidJWS) {
        seeds.append(FuzzSeed("resign-cli-transaction", resigned(.transaction, cli.payload)))
    }
    for (name, jws) in FuzzFixtures.appleJWS.map({ ($0.name, $0.text) }) {
        guard let decoded = FuzzSamples.decodedJSON(jws) else { continue }
        let decoder: SegmentedJWSInput.Decoder = name.contains("notification") ? .notification
            : name.contains("renewalinfo") ? .renewalInfo : .transaction
        seeds.append(FuzzSeed("resign-apple-\(name)", resigned(decoder, decoded.payload)))
    }
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
