/// Entry points that expose the verifier's internal parsers to the libFuzzer targets in `Fuzz/`.
///
/// SPI `Fuzzing`: not part of the supported API, and used by nothing but the fuzz targets.
/// Everything else the fuzz targets exercise goes through the public API
/// (``SignedDataVerifier``, `IngestStage`).
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
}
