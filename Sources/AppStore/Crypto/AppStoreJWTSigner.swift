import COpenSSL
import Foundation

/// Signs the ES256 bearer tokens the App Store Server API requires, with the in-app purchase key
/// from App Store Connect (a `.p8` file: a PKCS#8 PEM EC P-256 private key).
///
/// Only the compact-JWS mechanics live here (this is the only folder that imports OpenSSL); which
/// claims go into a token, and how long it is reused, is ``AppStoreBearerTokenProvider``'s job.
///
/// - Important: The private key never leaves the OpenSSL object: ``description`` is redacted, and
///   key-loading errors name the file and the problem, never the key bytes. Thread-safe: each
///   signature uses its own OpenSSL context.
public struct AppStoreJWTSigner: Sendable, CustomStringConvertible {
    let key: EVPKey
    /// The public half, which a verifier (the fake App Store, tests) checks tokens with.
    public let publicKey: PublicKey

    init(key: EVPKey) throws(AppStoreConfigurationError) {
        let der: [UInt8]
        do { der = try Self.encode("i2d_PUBKEY") { i2d_PUBKEY(key.pointer, $0) } } catch {
            throw AppStoreConfigurationError(key: "signingKey", message: "the public key cannot be derived")
        }
        self.key = key
        self.publicKey = try PublicKey(der: der)
    }

    /// Loads a signing key from PEM text.
    ///
    /// Accepts `-----BEGIN PRIVATE KEY-----` (PKCS#8, what App Store Connect issues) and, for
    /// keys converted by hand, `-----BEGIN EC PRIVATE KEY-----` (SEC1).
    /// - Parameter pem: The PEM text.
    /// - Throws: ``AppStoreConfigurationError`` (key `signingKey`) when the text holds no private
    ///   key block, the key cannot be parsed, or it is not an EC P-256 key.
    public init(pem: String) throws(AppStoreConfigurationError) {
        let der = try Self.privateKeyDER(fromPEM: pem)
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        ERR_clear_error()
        guard let parsed else {
            throw AppStoreConfigurationError(key: "signingKey", message: "the PEM private key block cannot be parsed")
        }
        let key = EVPKey(owning: parsed)
        guard key.isP256 else {
            throw AppStoreConfigurationError(key: "signingKey", message: "the signing key must be an EC P-256 key (ES256)")
        }
        try self.init(key: key)
    }

    /// Loads a signing key from a `.p8` file.
    /// - Parameter path: The file path (read once; the contents are never logged).
    /// - Returns: The signer.
    /// - Throws: ``AppStoreConfigurationError`` when the file is unreadable or holds no usable key.
    public static func load(path: String) throws(AppStoreConfigurationError) -> AppStoreJWTSigner {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AppStoreConfigurationError(key: "signingKeyPath", message: "cannot read \(path)")
        }
        do throws(AppStoreConfigurationError) {
            return try AppStoreJWTSigner(pem: String(decoding: data, as: UTF8.self))
        } catch {
            throw AppStoreConfigurationError(key: "signingKeyPath", message: "\(path): \(error.message)")
        }
    }

    /// Generates a fresh P-256 key, for tests, the demo and the fake App Store.
    /// - Returns: A signer with a new key.
    /// - Throws: ``OpenSSLError`` when key generation fails.
    public static func generate() throws -> AppStoreJWTSigner {
        try AppStoreJWTSigner(key: try EVPKey.generateEC())
    }

    /// The private key as a PKCS#8 PEM document, the `.p8` format App Store Connect hands out.
    ///
    /// Test and demo tooling only (`receiptd fake-appstore --pki-dir` writes it); production keys
    /// are read, never written.
    /// - Throws: ``OpenSSLError`` when encoding fails.
    public func pkcs8PEM() throws -> String {
        guard let info = EVP_PKEY2PKCS8(key.pointer) else { throw OpenSSLError("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let der = try Self.encode("i2d_PKCS8_PRIV_KEY_INFO") { i2d_PKCS8_PRIV_KEY_INFO(info, $0) }
        return Self.pem(label: "PRIVATE KEY", der: der)
    }

    /// Signs `header.payload` and returns the compact JWS.
    /// - Parameters:
    ///   - headerJSON: The protected header as JSON bytes.
    ///   - payloadJSON: The claims as JSON bytes.
    /// - Returns: `base64url(header).base64url(payload).base64url(r‖s)`.
    /// - Throws: ``OpenSSLError`` when signing fails.
    public func sign(headerJSON: [UInt8], payloadJSON: [UInt8]) throws -> String {
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payloadJSON)
        let digest = SHA256Digest.hash(Array(signingInput.utf8))
        let der = try digest.withUnsafeBytes { try key.sign(digest: $0) }
        guard let raw = ES256.rawFromDER(der) else { throw OpenSSLError("ECDSA signature conversion") }
        return signingInput + "." + Base64URL.encode(raw)
    }

    /// Redacted: a signer never prints key material.
    public var description: String { "AppStoreJWTSigner(P-256, key redacted)" }

    /// An EC P-256 public key that checks the ES256 signature of compact JWS tokens.
    public struct PublicKey: Sendable, CustomStringConvertible {
        let key: EVPKey
        /// The DER `SubjectPublicKeyInfo`.
        public let derBytes: [UInt8]

        init(der: [UInt8]) throws(AppStoreConfigurationError) {
            let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                return d2i_PUBKEY(nil, &cursor, buffer.count)
            }
            ERR_clear_error()
            guard let parsed else {
                throw AppStoreConfigurationError(key: "publicKey", message: "not a DER SubjectPublicKeyInfo")
            }
            let key = EVPKey(owning: parsed)
            guard key.isP256 else { throw AppStoreConfigurationError(key: "publicKey", message: "not an EC P-256 key") }
            self.key = key
            self.derBytes = der
        }

        /// Parses a `-----BEGIN PUBLIC KEY-----` PEM document.
        /// - Parameter pem: The PEM text.
        /// - Throws: ``AppStoreConfigurationError`` when it is not a P-256 public key.
        public init(pem: String) throws(AppStoreConfigurationError) {
            guard let der = AppStoreJWTSigner.pemBody(pem, labels: ["PUBLIC KEY"]) else {
                throw AppStoreConfigurationError(key: "publicKey", message: "no PUBLIC KEY PEM block")
            }
            try self.init(der: der)
        }

        /// The key as a `PUBLIC KEY` PEM document.
        public var pem: String { AppStoreJWTSigner.pem(label: "PUBLIC KEY", der: derBytes) }

        /// Whether `token` is a compact JWS whose ES256 signature (64 bytes `r‖s`) verifies with
        /// this key. Only the signature is checked; header and claims are the caller's
        /// (see ``AppStoreBearerToken``).
        /// - Parameter token: `header.payload.signature`.
        /// - Returns: `true` only for a valid signature.
        public func isValidSignature(of token: String) -> Bool {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let raw = Base64URL.decode(String(parts[2])),
                  raw.count == ES256.rawSignatureCount else { return false }
            let digest = SHA256Digest.hash(Array("\(parts[0]).\(parts[1])".utf8))
            return raw.withUnsafeBytes { rawBytes in
                digest.withUnsafeBytes { key.verify(rawES256Signature: rawBytes, digest: $0) }
            }
        }

        /// The first 16 hex digits of SHA-256 over the DER, enough to tell keys apart in logs.
        public var description: String {
            let hex = SHA256Digest.hash(derBytes).prefix(8).map { String($0, radix: 16) }
                .map { $0.count == 1 ? "0" + $0 : $0 }.joined()
            return "AppStoreJWTSigner.PublicKey(sha256 \(hex)…)"
        }
    }

    // MARK: - PEM and DER helpers

    static func privateKeyDER(fromPEM pem: String) throws(AppStoreConfigurationError) -> [UInt8] {
        guard let der = pemBody(pem, labels: ["PRIVATE KEY", "EC PRIVATE KEY"]) else {
            throw AppStoreConfigurationError(
                key: "signingKey", message: "no PRIVATE KEY PEM block (expected the .p8 file from App Store Connect)")
        }
        return der
    }

    /// The DER inside the first PEM block with one of `labels`, or `nil`.
    static func pemBody(_ pem: String, labels: [String]) -> [UInt8]? {
        for label in labels {
            let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
            guard let start = pem.range(of: begin), let stop = pem.range(of: end, range: start.upperBound..<pem.endIndex) else {
                continue
            }
            let body = pem[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            if let der = Base64.decode(String(body)), !der.isEmpty { return der }
        }
        return nil
    }

    static func pem(label: String, der: [UInt8]) -> String {
        let body = Array(Base64.encode(der))
        var lines = ["-----BEGIN \(label)-----"]
        stride(from: 0, to: body.count, by: 64).forEach { lines.append(String(body[$0..<min($0 + 64, body.count)])) }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Runs an OpenSSL `i2d_*` function twice (length, then bytes).
    static func encode(_ operation: String,
                       _ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws -> [UInt8] {
        let length = i2d(nil)
        guard length > 0 else { throw OpenSSLError(operation) }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        guard written == length else { throw OpenSSLError(operation) }
        return der
    }
}
