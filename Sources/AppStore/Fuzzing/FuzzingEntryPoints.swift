/// Entry points that expose the verifier's internal parsers to the libFuzzer targets in `Fuzz/`.
///
/// SPI `Fuzzing`: not part of the supported API, and used by nothing but the fuzz targets.
/// Everything else the fuzz targets exercise goes through the public API
/// (``SignedDataVerifier``, ``AppReceiptVerifier``, ``ReceiptUtility``, `IngestStage`).
@_spi(Fuzzing) public enum FuzzingEntryPoints {
    /// Parses bytes with the strict JSON parser that reads JWS headers and payloads.
    /// - Parameters:
    ///   - bytes: The candidate JSON text.
    ///   - maxDepth: The deepest allowed container nesting (a top-level object is depth 1).
    /// - Returns: `nil` when the bytes are accepted, else the rejection (`invalid-json`,
    ///   `duplicate-json-member` or `json-too-deep`).
    public static func parseStrictJSON(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> VerificationError? {
        do throws(VerificationError) {
            _ = try JSONParser.parse(bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    /// Checks the tape (``JSONTape``, the contracts' fast path) against the strict parser on the
    /// same bytes. - Returns: nil when they agree (or the tape leaves the bytes to the parser),
    /// else what differs.
    public static func tapeDisagreement(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> String? {
        let parsed = try? JSONParser.parse(bytes, maxDepth: maxDepth)
        guard let tape = JSONTape(Array(bytes), maxDepth: maxDepth) else { return nil }
        guard let parsed else { return "the tape accepted what the parser refuses" }
        return tape.value(at: tape.root) == parsed ? nil : "the tape reads a value the parser does not"
    }

    /// Decodes canonical unpadded base64url, as JWS segments are decoded.
    /// - Parameter bytes: The encoded text.
    /// - Returns: The decoded bytes, or `nil` when the text is not canonical base64url.
    public static func decodeBase64URL(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        Base64URL.decode(bytes)
    }

    /// Encodes bytes as unpadded base64url, as JWS segments are encoded.
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The canonical encoding.
    public static func encodeBase64URL(_ bytes: [UInt8]) -> String {
        Base64URL.encode(bytes)
    }

    /// Decodes an app receipt's payload (the attribute SET signed inside the PKCS#7 envelope) with
    /// the bounded DER walker, without any envelope or signature.
    ///
    /// Why: behind ``AppReceiptVerifier`` the walker only sees content whose signature verified,
    /// which mutated input almost never has; ``ReceiptUtility`` reaches it unsigned, but only
    /// through an envelope whose lengths a mutation inside the content breaks. This feeds the
    /// walker directly.
    /// - Parameter bytes: The candidate payload DER.
    /// - Returns: The decoded receipt (no claims or dates checked against anything).
    /// - Throws: ``VerificationError`` `invalid-receipt`, `invalid-field` or `invalid-date`.
    public static func parseReceiptPayload(_ bytes: UnsafeBufferPointer<UInt8>) throws(VerificationError) -> AppReceipt {
        try ReceiptPayloadParser.parse(Array(bytes))
    }

    /// The signed content of a PKCS#7 receipt envelope (DER or BER), with no trust decision: the
    /// receipt fuzz target turns its envelope seeds into payload seeds with it.
    /// - Parameter der: The decoded receipt.
    /// - Returns: The `id-data` content, or `nil` when the envelope is rejected.
    public static func receiptPayload(ofEnvelope der: [UInt8]) -> [UInt8]? {
        try? PKCS7Container(der: der, maxCertificates: 64).content
    }
}
