import Foundation
import Observability

/// Per-kind structural checks and normalisation of a submission's payload. Cheap and crypto-free:
/// it only makes sure verify receives something of the right shape.
enum PayloadNormaliser {
    /// Normalises `payload` for `kind`, or returns a human-readable problem.
    ///
    /// - Every kind: surrounding ASCII whitespace is trimmed.
    /// - JWS kinds: exactly three non-empty base64url segments (no padding), the first of which
    ///   decodes to something that starts like a JSON object (the JOSE header).
    /// - `appReceipt`: all whitespace and line breaks removed, standard base64 alphabet only,
    ///   missing `=` padding completed, and it must decode.
    /// - `transactionId`: ASCII digits only, 1…`maxTransactionIdDigits` of them.
    static func normalise(_ payload: String, kind: SubmissionKind,
                          maxTransactionIdDigits: Int) -> Result<String, PayloadProblem> {
        let trimmed = trimASCIIWhitespace(payload)
        guard !trimmed.isEmpty else { return .failure(.empty) }
        switch kind {
        case .signedTransaction, .signedRenewalInfo, .serverNotification:
            return checkJWS(trimmed)
        case .appReceipt:
            return normaliseBase64(trimmed)
        case .transactionId:
            let bytes = Array(trimmed.utf8)
            guard bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(.malformed("transactionId payload must contain only digits"))
            }
            guard bytes.count <= maxTransactionIdDigits else {
                return .failure(.malformed("transactionId payload has \(bytes.count) digits, at most \(maxTransactionIdDigits) allowed"))
            }
            return .success(trimmed)
        }
    }

    /// Why a payload was refused.
    enum PayloadProblem: Error, Equatable {
        /// Nothing left after trimming.
        case empty
        /// Wrong shape, with a human-readable reason.
        case malformed(String)
    }

    private static func checkJWS(_ text: String) -> Result<String, PayloadProblem> {
        // One pass over the UTF-8 bytes in place, no intermediate arrays: this check ran at about
        // 7% of the ingest-side workers' CPU while it split, copied and fully decoded the header.
        if let problem = text.withUTF8InPlace(jwsProblem) { return .failure(problem) }
        return .success(text)
    }

    /// Why `bytes` is not a compact JWS, or nil. The problems and their order: the segment count,
    /// then per segment in order empty, not base64url, impossible length, not canonical; then the
    /// header.
    private static func jwsProblem(_ bytes: UnsafeBufferPointer<UInt8>) -> PayloadProblem? {
        // The dots by memchr, then each segment's bytes OR-ed through a table without a branch
        // per byte: the check reads a JWS of a few KiB for every submission.
        var dots = 0, firstDot = 0, secondDot = 0, from = 0
        while from < bytes.count, let found = memchr(bytes.baseAddress! + from, Int32(UInt8(ascii: ".")), bytes.count - from) {
            let index = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if dots == 0 { firstDot = index } else if dots == 1 { secondDot = index }
            dots += 1
            from = index + 1
        }
        guard dots == 2 else { return .malformed("JWS must have three dot-separated segments, found \(dots + 1)") }
        for segment in 0..<3 {
            let range = segment == 0 ? 0..<firstDot : segment == 1 ? firstDot + 1..<secondDot : secondDot + 1..<bytes.count
            guard !range.isEmpty else { return .malformed("JWS segment \(segment + 1) is empty") }
            let invalid = notBase64URL.withUnsafeBufferPointer { table in
                range.reduce(UInt8(0)) { $0 | table[Int(bytes[$1])] }
            }
            guard invalid == 0 else { return .malformed("JWS segment \(segment + 1) is not base64url") }
            guard range.count % 4 != 1 else {
                return .malformed("JWS segment \(segment + 1) has an impossible base64url length")
            }
            // The last character of a segment whose length is 2 or 3 mod 4 carries 4 or 2 bits
            // beyond the data; the verifier accepts only canonical base64url (those bits zero),
            // so a JWS that fails here would fail there, one hop later.
            let unusedBits: UInt8 = range.count % 4 == 2 ? 0x0F : range.count % 4 == 3 ? 0x03 : 0
            guard base64Values[Int(bytes[range.upperBound - 1])] & unusedBits == 0 else {
                return .malformed("JWS segment \(segment + 1) is not canonical base64url")
            }
        }
        // The header is valid base64url of a possible length, so it decodes; only its first
        // non-whitespace byte matters, so decode no further than that.
        guard firstNonWhitespaceDecodedByte(UnsafeBufferPointer(rebasing: bytes[0..<firstDot])) == UInt8(ascii: "{") else {
            return .malformed("JWS header does not decode to a JSON object")
        }
        return nil
    }

    /// The first decoded byte of base64 (either alphabet, unpadded, length not 1 mod 4) that is not
    /// ASCII whitespace, or nil when there is none.
    private static func firstNonWhitespaceDecodedByte(_ encoded: UnsafeBufferPointer<UInt8>) -> UInt8? {
        base64Values.withUnsafeBufferPointer { values in
            var start = 0
            while start < encoded.count {
                let count = min(4, encoded.count - start)
                var bits: UInt32 = 0
                for offset in 0..<4 {
                    bits = bits << 6 | (offset < count ? UInt32(values[Int(encoded[start + offset])]) : 0)
                }
                for byte in 0..<(count - 1) {
                    let value = UInt8(truncatingIfNeeded: bits >> (16 - 8 * byte))
                    if !isASCIIWhitespace(value) { return value }
                }
                start += 4
            }
            return nil
        }
    }

    private static func normaliseBase64(_ text: String) -> Result<String, PayloadProblem> {
        var bytes = text.utf8.filter { !isASCIIWhitespace($0) }
        var padding = 0
        while let last = bytes.last, last == UInt8(ascii: "=") {
            padding += 1
            bytes.removeLast()
        }
        guard padding <= 2 else { return .failure(.malformed("appReceipt has more than two padding characters")) }
        guard !bytes.isEmpty else { return .failure(.empty) }
        guard bytes.allSatisfy(isBase64Byte) else {
            return .failure(.malformed("appReceipt is not standard base64"))
        }
        let remainder = bytes.count % 4
        guard remainder != 1 else { return .failure(.malformed("appReceipt has an impossible base64 length")) }
        let needed = remainder == 0 ? 0 : 4 - remainder
        guard padding == 0 || padding == needed else {
            return .failure(.malformed("appReceipt has wrong base64 padding"))
        }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "="), count: needed))
        let normalised = String(decoding: bytes, as: UTF8.self)
        guard Data(base64Encoded: normalised) != nil else {
            return .failure(.malformed("appReceipt does not decode as base64"))
        }
        return .success(normalised)
    }

    /// Decodes base64url (or standard base64), completing missing `=` padding; nil when Foundation's
    /// base64 decoder refuses the padded text. Input of alphabet bytes only (the JWS case) is
    /// decoded here directly; anything else (`=`, other bytes) takes the Foundation path.
    static func decodeBase64URL(_ segment: [UInt8]) -> [UInt8]? {
        segment.withUnsafeBufferPointer { decodeBase64URL($0) }
    }

    /// As ``decodeBase64URL(_:)-([UInt8])``, over a buffer.
    static func decodeBase64URL(_ segment: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = segment.count % 4
        // No padding completes alphabet-only text of this length, but `=` in it may (`=` → `====`).
        guard remainder != 1 else { return decodeBase64URLThroughFoundation(segment) }
        let outCount = segment.count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var alphabetOnly = true
        let output = base64Values.withUnsafeBufferPointer { values in
            [UInt8](unsafeUninitializedCapacity: outCount) { out, initialized in
                var source = 0, target = 0
                while source < segment.count {
                    let count = min(4, segment.count - source)
                    var bits: UInt32 = 0, invalid: UInt8 = 0
                    for offset in 0..<4 {
                        let value = offset < count ? values[Int(segment[source + offset])] : 0
                        invalid |= value
                        bits = bits << 6 | UInt32(value & 0x3F)
                    }
                    guard invalid & 0x80 == 0 else {
                        alphabetOnly = false
                        break
                    }
                    for byte in 0..<(count - 1) {
                        out[target + byte] = UInt8(truncatingIfNeeded: bits >> (16 - 8 * byte))
                    }
                    source += 4
                    target += count - 1
                }
                initialized = alphabetOnly ? outCount : 0
            }
        }
        return alphabetOnly ? output : decodeBase64URLThroughFoundation(segment)
    }

    /// The general path: map base64url to base64, pad, let Foundation judge (it accepts some
    /// padding forms a strict decoder would not, which this keeps accepting).
    private static func decodeBase64URLThroughFoundation(_ segment: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var standard = segment.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard)).map { Array($0) }
    }

    /// For ``jwsProblem(_:)``: 0 for a base64url byte, 1 for any other.
    private static let notBase64URL: [UInt8] = (0..<256).map { isBase64URLByte(UInt8($0)) ? 0 : 1 }

    /// Six-bit values of both base64 alphabets (`-`/`+` 62, `_`/`/` 63); 0xFF for any other byte.
    private static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    static func trimASCIIWhitespace(_ text: String) -> String {
        text.withUTF8InPlace { bytes in
            guard let first = bytes.firstIndex(where: { !isASCIIWhitespace($0) }),
                  let last = bytes.lastIndex(where: { !isASCIIWhitespace($0) }) else { return "" }
            if first == 0 && last == bytes.count - 1 { return text }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[first...last]), as: UTF8.self)
        }
    }

    static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isBase64URLByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isBase64Byte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
