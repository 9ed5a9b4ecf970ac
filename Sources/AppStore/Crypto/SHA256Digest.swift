import COpenSSL
import Observability

/// SHA-256 through OpenSSL's `EVP_Digest` with the algorithm fetched once: the one digest every
/// module uses (JWS signing input, `payloadSHA256`, event ids, the verified-JWS cache). OpenSSL
/// 3's one-shot `SHA256()` looks the algorithm up by name on every call (`EVP_Q_digest`).
public enum SHA256Digest {
    /// Size of a digest in bytes.
    public static let byteCount = 32

    /// The provider's SHA-256, fetched at first use and kept for the process (an `EVP_MD` is
    /// immutable once fetched, so every thread may use it). Should the fetch fail, `EVP_sha256()`
    /// is used, which OpenSSL resolves on each call.
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()

    /// Hashes `count` bytes at `bytes` into the 32-byte buffer `output`.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawPointer?, count: Int, into output: UnsafeMutablePointer<UInt8>?) {
        _ = EVP_Digest(bytes, count, output, nil, algorithm, nil)
    }

    /// SHA-256 of `count` bytes and of their first `prefix` bytes, in one pass over them (a JWS's
    /// digest, which keys the verified-JWS cache, and its signing input's, which the signature
    /// signs: the signing input is the JWS up to its second dot). - Returns: false when OpenSSL
    /// failed; the outputs are then not digests.
    static func hash(_ bytes: UnsafeRawPointer, count: Int, prefix: Int, into whole: UnsafeMutablePointer<UInt8>,
                     prefixInto prefixDigest: UnsafeMutablePointer<UInt8>) -> Bool {
        precondition(0 <= prefix && prefix <= count)
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard let branch = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(branch) }
        return EVP_DigestInit_ex2(context, algorithm, nil) == 1
            && EVP_DigestUpdate(context, bytes, prefix) == 1
            && EVP_MD_CTX_copy_ex(branch, context) == 1
            && EVP_DigestUpdate(context, bytes + prefix, count - prefix) == 1
            && EVP_DigestFinal_ex(branch, prefixDigest, nil) == 1
            && EVP_DigestFinal_ex(context, whole, nil) == 1
    }

    /// SHA-256 of a byte array.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { output, initialized in
            bytes.withUnsafeBytes { input in
                hash(input.baseAddress, count: input.count, into: output.baseAddress)
            }
            initialized = byteCount
        }
    }

    /// Lower-case hex SHA-256 of `bytes`.
    public static func hexDigest(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hex(of: $0) }
    }

    /// Lower-case hex SHA-256 of the UTF-8 encoding of `string`.
    public static func hexDigest(_ string: String) -> String {
        string.withUTF8InPlace { hex(of: UnsafeRawBufferPointer($0)) }
    }

    private static func hex(of input: UnsafeRawBufferPointer) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: byteCount) { digest in
            hash(input.baseAddress, count: input.count, into: digest.baseAddress)
            return String(unsafeUninitializedCapacity: byteCount * 2) { text in
                let digits: StaticString = "0123456789abcdef"
                digits.withUTF8Buffer { digits in
                    for (index, byte) in digest.enumerated() {
                        text[2 * index] = digits[Int(byte >> 4)]
                        text[2 * index + 1] = digits[Int(byte & 0x0f)]
                    }
                }
                return byteCount * 2
            }
        }
    }
}
