import Foundation
@_spi(Fuzzing) import AppStore

/// The input format of `FuzzJWSSegments`: the *decoded* segments of a JWS, so that mutations
/// land in the header JSON, the payload JSON or the raw signature instead of in base64url.
///
/// Layout: one flags byte, then `header`, `0x00`, `payload`, `0x00`, `signature` (the signature is
/// the rest of the input and may contain `0x00`; missing parts are empty). Flags:
///
/// | bits | meaning |
/// |---|---|
/// | 0–1 | decoder: 0 and 3 transaction, 1 renewal info, 2 notification |
/// | 2 | re-sign: the payload is signed by ``FuzzVerifier/pki`` under its own header; header and signature parts are ignored |
/// | 3, 4, 5 | (not re-signing) replace the header, payload, signature of `cli/valid.jws` with the base64url of the part |
public struct SegmentedJWSInput: Equatable {
    /// Which `SignedDataVerifier` entry point reads the JWS.
    public enum Decoder: UInt8 {
        /// `verifyAndDecodeTransaction`.
        case transaction = 0
        /// `verifyAndDecodeRenewalInfo`.
        case renewalInfo = 1
        /// `verifyAndDecodeNotification`.
        case notification = 2
    }

    /// The entry point (flag bits 0–1).
    public var decoder: Decoder
    /// Sign the payload with the harness PKI (flag bit 2).
    public var resign: Bool
    /// Use ``header`` instead of the fixture's header (flag bit 3).
    public var replaceHeader: Bool
    /// Use ``payload`` instead of the fixture's payload (flag bit 4).
    public var replacePayload: Bool
    /// Use ``signature`` instead of the fixture's signature (flag bit 5).
    public var replaceSignature: Bool
    /// The decoded header (JSON text).
    public var header: [UInt8]
    /// The decoded payload (JSON text).
    public var payload: [UInt8]
    /// The raw signature (64 bytes `r‖s` when well-formed).
    public var signature: [UInt8]

    /// Creates an input.
    public init(decoder: Decoder, resign: Bool, replaceHeader: Bool = false, replacePayload: Bool = false,
                replaceSignature: Bool = false, header: [UInt8] = [], payload: [UInt8] = [], signature: [UInt8] = []) {
        self.decoder = decoder
        self.resign = resign
        self.replaceHeader = replaceHeader
        self.replacePayload = replacePayload
        self.replaceSignature = replaceSignature
        self.header = header
        self.payload = payload
        self.signature = signature
    }

    /// Parses fuzzer bytes (every byte string is some input).
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        let flags = bytes.first ?? 0
        var parts: [[UInt8]] = [[], [], []]
        var part = 0
        for byte in bytes.dropFirst() {
            if byte == 0 && part < 2 {
                part += 1
            } else {
                parts[part].append(byte)
            }
        }
        self.init(decoder: Decoder(rawValue: flags & 3) ?? .transaction, resign: flags & 4 != 0,
                  replaceHeader: flags & 8 != 0, replacePayload: flags & 16 != 0, replaceSignature: flags & 32 != 0,
                  header: parts[0], payload: parts[1], signature: parts[2])
    }

    /// The fuzzer bytes for this input.
    public var bytes: [UInt8] {
        var flags = decoder.rawValue
        if resign { flags |= 4 }
        if replaceHeader { flags |= 8 }
        if replacePayload { flags |= 16 }
        if replaceSignature { flags |= 32 }
        return [flags] + header + [0] + payload + [0] + signature
    }

    /// `cli/valid.jws` decoded, with all three segments "replaced" by themselves (so it verifies).
    public static var validCLI: SegmentedJWSInput {
        let decoded = FuzzFixtures.segments(FuzzFixtures.cliValidJWS).map { FuzzFixtures.decodeSegment($0) ?? [] }
        return SegmentedJWSInput(decoder: .transaction, resign: false, replaceHeader: true, replacePayload: true,
                                 replaceSignature: true, header: decoded[0], payload: decoded[1], signature: decoded[2])
    }

    /// Builds the compact JWS: re-signed with ``FuzzVerifier/pki``, or `cli/valid.jws` with the
    /// selected segments replaced.
    /// - Returns: The JWS, and whether it is exactly what its signer signed (so it may verify).
    public func jws() -> (text: String, signed: Bool) {
        if resign {
            do {
                return (try FuzzVerifier.pki.signer.sign(payload: payload), true)
            } catch {
                fuzzCheck(false, "signing failed: \(error)")
            }
        }
        var segments = FuzzFixtures.segments(FuzzFixtures.cliValidJWS)
        if replaceHeader { segments[0] = FuzzingEntryPoints.encodeBase64URL(header) }
        if replacePayload { segments[1] = FuzzingEntryPoints.encodeBase64URL(payload) }
        if replaceSignature { segments[2] = FuzzingEntryPoints.encodeBase64URL(signature) }
        let text = segments.joined(separator: ".")
        return (text, text == FuzzFixtures.cliValidJWS)
    }
}
