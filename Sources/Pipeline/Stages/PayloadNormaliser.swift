import Foundation

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
        // One pass over the UTF-8 bytes in place (splitting into subsequences and copying them cost
        // more than the rest of ingest's validation in a profile).
        var contiguous = text
        let problem = contiguous.withUTF8 { bytes -> PayloadProblem? in
            var bounds: [Range<Int>] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: ".") {
                bounds.append(start..<index)
                start = index + 1
                if bounds.count > 3 { break }
            }
            guard bounds.count == 3 else {
                let segments = bounds.count > 3 ? bytes.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) } : bounds.count
                return .malformed("JWS must have three dot-separated segments, found \(segments)")
            }
            for (index, range) in bounds.enumerated() {
                guard !range.isEmpty else { return .malformed("JWS segment \(index + 1) is empty") }
                for position in range where !isBase64URLByte(bytes[position]) {
                    return .malformed("JWS segment \(index + 1) is not base64url")
                }
                guard range.count % 4 != 1 else {
                    return .malformed("JWS segment \(index + 1) has an impossible base64url length")
                }
            }
            guard let header = decodeBase64URL(Array(bytes[bounds[0]])),
                  header.first(where: { !isASCIIWhitespace($0) }) == UInt8(ascii: "{") else {
                return .malformed("JWS header does not decode to a JSON object")
            }
            return nil
        }
        if let problem { return .failure(problem) }
        return .success(text)
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

    static func decodeBase64URL(_ segment: [UInt8]) -> [UInt8]? {
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

    static func trimASCIIWhitespace(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard let first = bytes.firstIndex(where: { !isASCIIWhitespace($0) }),
              let last = bytes.lastIndex(where: { !isASCIIWhitespace($0) }) else { return "" }
        if first == 0 && last == bytes.count - 1 { return text }
        return String(decoding: bytes[first...last], as: UTF8.self)
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
