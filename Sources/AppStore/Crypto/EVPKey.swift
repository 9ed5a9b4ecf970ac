import COpenSSL
import Synchronization

/// Owner of one OpenSSL `EVP_PKEY` (an EC P-256 public or private key).
///
/// - Important: OpenSSL 3 keys are safe to share between threads for sign/verify as long as each
///   operation uses its own `EVP_PKEY_CTX`, which is what every method here does (a verify context
///   is used by one thread at a time, then kept for the next verification).
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Verify contexts initialised once and used again: OpenSSL documents `EVP_PKEY_verify` as
    /// callable more than once on a context with the same parameters, and a new context with its
    /// `EVP_PKEY_verify_init` cost about 1.7 µs here (OpenSSL 3 fetches the provider's methods by
    /// name), 2 to 4% of a P-256 verification. A leaf key verifies every JWS Apple signs with it.
    private let idleVerifyContexts = Mutex<[VerifyContext]>([])
    /// Idle verify contexts kept at most (one per thread verifying at once is enough).
    static let maxIdleVerifyContexts = 8

    /// The key's point for batched checks (``P256BatchVerification``), found at the first one.
    private let p256PointState = Mutex<P256PointState>(.unknown)

    private enum P256PointState {
        case unknown
        case none
        case point(P256Point)
    }

    /// An `EVP_PKEY_CTX*` passed between threads, used by one at a time.
    private struct VerifyContext: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Takes ownership of an `EVP_PKEY*` (one reference).
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        for context in idleVerifyContexts.withLock({ $0 }) { EVP_PKEY_CTX_free(context.pointer) }
        EVP_PKEY_free(pointer)
    }

    /// The public key of a certificate (a new reference).
    static func publicKey(of certificate: X509Certificate) -> EVPKey? {
        certificate.withUnsafeX509Pointer { x509 in
            X509_get_pubkey(x509).map { EVPKey(owning: $0) }
        }
    }

    /// Generates a fresh key on a named curve (`P-256`, `P-384`).
    /// - Throws: ``OpenSSLError`` when generation fails.
    static func generateEC(curve: String = "P-256") throws -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, curve) == 1 else { throw OpenSSLError("EVP_PKEY_CTX_set_group_name") }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_generate") }
        return EVPKey(owning: key)
    }

    /// Whether this is an EC key on P-256 (`prime256v1`).
    var isP256: Bool {
        guard EVP_PKEY_is_a(pointer, "EC") == 1 else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else { return false }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256"
    }

    /// The public point of a P-256 key, for checks verified in a batch; nil for any other key
    /// (whose checks go through ``verify(rawES256Signature:digest:)``). Read once per key.
    var p256Point: P256Point? {
        p256PointState.withLock { state in
            switch state {
            case .point(let point): return point
            case .none: return nil
            case .unknown:
                let point = readP256Point()
                state = point.map { .point($0) } ?? .none
                return point
            }
        }
    }

    private func readP256Point() -> P256Point? {
        guard isP256, let curve = P256Curve.shared else { return nil }
        // SEC 1 encoded: 65 bytes uncompressed, the most a P-256 point takes.
        return withUnsafeTemporaryAllocation(byteCount: 65, alignment: 1) { buffer -> P256Point? in
            var length = 0
            guard EVP_PKEY_get_octet_string_param(pointer, "pub", buffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                                  buffer.count, &length) == 1 else {
                ERR_clear_error()
                return nil
            }
            return curve.point(encoded: UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        }
    }

    /// Verifies a DER `ECDSA-Sig-Value` over a precomputed digest.
    /// - Returns: `true` only when OpenSSL reports a valid signature.
    func verify(derSignature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) -> Bool {
        guard let context = takeVerifyContext() else {
            ERR_clear_error()
            return false
        }
        let result = EVP_PKEY_verify(
            context,
            derSignature.baseAddress?.assumingMemoryBound(to: UInt8.self), derSignature.count,
            digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count)
        if result != 1 { ERR_clear_error() }
        // 0 is a signature that does not verify; below 0 an error, after which the context is not kept.
        if result >= 0 { keepVerifyContext(context) } else { EVP_PKEY_CTX_free(context) }
        return result == 1
    }

    /// An idle verify context, or a new one initialised for verification; nil when OpenSSL fails.
    private func takeVerifyContext() -> OpaquePointer? {
        if let idle = idleVerifyContexts.withLock({ $0.popLast() }) { return idle.pointer }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    private func keepVerifyContext(_ context: OpaquePointer) {
        let kept = VerifyContext(pointer: context)
        let wasKept = idleVerifyContexts.withLock { idle -> Bool in
            guard idle.count < Self.maxIdleVerifyContexts else { return false }
            idle.append(kept)
            return true
        }
        if !wasKept { EVP_PKEY_CTX_free(context) }
    }

    /// Verifies a JOSE ES256 signature (64 bytes `r‖s`) over a precomputed SHA-256 digest.
    /// - Returns: `false` for a wrong length or an invalid signature.
    func verify(rawES256Signature raw: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) -> Bool {
        guard raw.count == ES256.rawSignatureCount else { return false }
        return withUnsafeTemporaryAllocation(byteCount: ES256.maxDERCount, alignment: 1) { der in
            let count = ES256.derFromRaw(raw, into: der)
            return verify(derSignature: UnsafeRawBufferPointer(rebasing: der[0..<count]), digest: digest)
        }
    }

    /// Signs a precomputed digest, returning a DER `ECDSA-Sig-Value`.
    /// - Throws: ``OpenSSLError`` when signing fails.
    func sign(digest: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { throw OpenSSLError("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_sign_init(context) == 1 else { throw OpenSSLError("EVP_PKEY_sign_init") }
        let input = digest.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length = 0
        guard EVP_PKEY_sign(context, nil, &length, input, digest.count) == 1 else { throw OpenSSLError("EVP_PKEY_sign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(context, &signature, &length, input, digest.count) == 1 else { throw OpenSSLError("EVP_PKEY_sign") }
        signature.removeLast(signature.count - length)
        return signature
    }
}
