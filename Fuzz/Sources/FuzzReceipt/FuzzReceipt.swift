// fuzz-max-len: 8192 (the largest envelope seed, Apple's r2 receipt, is 6.6 KB of DER; r3, 77 KB, is left out)
// fuzz-dict: receipt.dict
import Foundation
@_spi(Fuzzing) import AppStore
import FuzzSupport

/// The local app receipt path of the verify stage over arbitrary bytes, each input read three ways:
/// 1. as a PKCS#7 envelope (DER or BER), base64-encoded and given to
///    `AppReceiptVerifier.verifyAndDecodeAppReceipt` (base64, `d2i_PKCS7`, the `PKCS7Layout` walk
///    and chain cache, `PKCS7_verify`, the chain, the payload walker, dates, claims; see
///    ``FuzzReceiptVerifier``) and to `ReceiptUtility.extractTransactionIds`;
/// 2. as an unsigned receipt payload, given straight to the DER walker
///    (`@_spi(Fuzzing) FuzzingEntryPoints.parseReceiptPayload`), which behind the verifier only
///    sees content whose signature verified;
/// 3. as base64 text, given to the verifier as is (the strict base64 decoder).
///
/// Invariants: every rejection has a documented, final reason for its entry point and a short
/// detail; only a genuine receipt (a fixture's signed content) verifies; the cache-hit path and a
/// cold verifier agree; `ReceiptUtility` reads the same transaction ids from a receipt that
/// verifies; named attribute types are never left raw; the verifier rejects text as
/// `invalid-base64` exactly when it is not canonical padded base64.
let target = FuzzTarget(name: "FuzzReceipt", seeds: receiptSeeds) { input in
    checkEnvelope(Array(input))
    checkPayload(input)
    checkText(String(decoding: input, as: UTF8.self))
}

typealias Receipts = FuzzReceiptVerifier

/// Reading 1: the bytes as a receipt envelope.
func checkEnvelope(_ der: [UInt8]) {
    let encoded = Data(der).base64EncodedString()
    let warm = Receipts.warm.verifyAndDecodeAppReceipt(encoded)
    var ids: [String]?
    do throws(VerificationError) {
        ids = try ReceiptUtility.extractTransactionIds(appReceipt: encoded)
    } catch {
        Receipts.checkRejection(error, allowed: Receipts.utilityReasons, "ReceiptUtility")
    }
    switch warm {
    case .valid(let receipt):
        fuzzCheck(Receipts.genuine.contains(receipt), "a receipt that is not genuine verified (\(der.count) bytes)")
        Receipts.checkDecoded(receipt, "AppReceiptVerifier")
        let expected = receipt.inAppPurchases.compactMap { $0.transactionId ?? $0.originalTransactionId }
        fuzzCheck(ids == expected, "ReceiptUtility read \(ids.map { "\($0)" } ?? "an error"), the verifier \(expected)")
    case .invalid(let error):
        Receipts.checkRejection(error, allowed: Receipts.verifierReasons, "AppReceiptVerifier")
    }
    // A cache hit must never accept what the full path rejects, nor answer a cached chain
    // rejection for a receipt whose chain verifies.
    if warm.value != nil || warm.error.map({ Receipts.cachedReasons.contains($0.reason) }) == true {
        let cold = Receipts.cold().verifyAndDecodeAppReceipt(encoded)
        fuzzCheck(cold.value == warm.value, "cached path: \(warm.error.map { "\($0)" } ?? "valid"), "
                  + "full path: \(cold.error.map { "\($0)" } ?? "valid")")
    }
}

/// Reading 2: the bytes as an unsigned receipt payload.
func checkPayload(_ bytes: UnsafeBufferPointer<UInt8>) {
    do throws(VerificationError) {
        Receipts.checkDecoded(try FuzzingEntryPoints.parseReceiptPayload(bytes), "payload walker")
    } catch {
        Receipts.checkRejection(error, allowed: Receipts.payloadReasons, "payload walker")
    }
}

/// Reading 3: the bytes as the base64 text a submission carries.
func checkText(_ text: String) {
    let canonical = Data(base64Encoded: text).map { $0.base64EncodedString() == text } ?? false
    switch Receipts.warm.verifyAndDecodeAppReceipt(text) {
    case .valid(let receipt):
        fuzzCheck(canonical, "non-canonical base64 was decoded")
        fuzzCheck(Receipts.genuine.contains(receipt), "a receipt that is not genuine verified (text)")
    case .invalid(let error):
        Receipts.checkRejection(error, allowed: Receipts.verifierReasons, "AppReceiptVerifier (text)")
        if error.reason == .invalidBase64 {
            fuzzCheck(!canonical, "canonical base64 rejected as invalid-base64: \(text.prefix(100))")
        } else if error.reason != .tooLarge {
            fuzzCheck(canonical, "non-canonical base64 was decoded (\(error.reason.code)): \(text.prefix(100))")
        }
    }
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
