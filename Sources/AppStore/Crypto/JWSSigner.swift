/// Produces ES256 compact JWS with an `x5c` header, like the App Store does.
///
/// Test and demo tooling: the demo generator signs synthetic transactions with a ``TestPKI`` so
/// that a verifier configured with ``TestPKI/root`` as trust anchor accepts them. Never configure
/// a production verifier with a test root.
///
/// - Important: Thread-safe; each signature uses its own OpenSSL context. Several thousand
///   signatures per second per core.
public final class JWSSigner: Sendable {
    /// The leaf private key.
    let key: EVPKey
    /// The base64url protected header segment, reused for every signature.
    public let headerSegment: String

    /// A signer with header `{"alg":"ES256","x5c":[…]}`.
    convenience init(key: EVPKey, x5c: [String]) {
        let quoted = x5c.map { "\"\($0)\"" }.joined(separator: ",")
        self.init(key: key, headerJSON: Array("{\"alg\":\"ES256\",\"x5c\":[\(quoted)]}".utf8))
    }

    /// A signer with an arbitrary header (tests build forbidden or malformed headers with it).
    init(key: EVPKey, headerJSON: [UInt8]) {
        self.key = key
        self.headerSegment = Base64URL.encode(headerJSON)
    }

    /// Signs a payload.
    /// - Parameter payload: The payload bytes (normally UTF-8 JSON).
    /// - Returns: `header.payload.signature` with a 64-byte `r‖s` signature.
    /// - Throws: ``OpenSSLError`` when signing fails.
    public func sign(payload: [UInt8]) throws -> String {
        let signingInput = headerSegment + "." + Base64URL.encode(payload)
        let der = try signatureDER(signingInput: signingInput)
        guard let raw = ES256.rawFromDER(der) else { throw OpenSSLError("ECDSA signature conversion") }
        return signingInput + "." + Base64URL.encode(raw)
    }

    /// Signs a JSON payload given as text.
    /// - Parameter payloadJSON: The JSON text, signed as its UTF-8 bytes.
    /// - Returns: The compact JWS.
    /// - Throws: ``OpenSSLError`` when signing fails.
    public func sign(payloadJSON: String) throws -> String {
        try sign(payload: Array(payloadJSON.utf8))
    }

    /// The DER ECDSA signature over a signing input (tests use it to build DER-signature forgeries).
    func signatureDER(signingInput: String) throws -> [UInt8] {
        let digest = SHA256Digest.hash(Array(signingInput.utf8))
        return try digest.withUnsafeBytes { try key.sign(digest: $0) }
    }
}
