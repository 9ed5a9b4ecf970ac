import COpenSSL
import Observability

/// SHA-256 through OpenSSL's low-level functions on a context kept by value: the one digest
/// every module uses (JWS signing input, `payloadSHA256`, event ids, the verified-JWS cache).
/// An input that starts with a JWS header seen before is hashed from that header's remembered
/// state (``SHA256PrefixStates``); the digests are those of the whole input all the same.
public enum SHA256Digest {
    /// Size of a digest in bytes.
    public static let byteCount = 32

    /// The process's remembered JWS header states (one Apple leaf's header serves every stage).
    static let prefixStates = SHA256PrefixStates()

    /// Hashes `count` bytes at `bytes` into the 32-byte buffer `output`.
    static func hash(_ bytes: UnsafeRawPointer?, count: Int, into output: UnsafeMutablePointer<UInt8>?) {
        guard let bytes, count > 0 else {
            var context = SHA256_CTX()
            COpenSSL_SHA256_Init(&context)
            COpenSSL_SHA256_Final(output, &context)
            return
        }
        var (context, absorbed) = prefixStates.start(bytes, count: count)
        COpenSSL_SHA256_Update(&context, bytes + absorbed, count - absorbed)
        COpenSSL_SHA256_Final(output, &context)
    }

    /// SHA-256 of `count` bytes and of their first `prefix` bytes, in one pass over them (a JWS's
    /// digest, which keys the verified-JWS cache, and its signing input's, which the signature
    /// signs: the signing input is the JWS up to its second dot).
    static func hash(_ bytes: UnsafeRawPointer, count: Int, prefix: Int, into whole: UnsafeMutablePointer<UInt8>,
                     prefixInto prefixDigest: UnsafeMutablePointer<UInt8>) {
        precondition(0 <= prefix && prefix <= count)
        var (context, absorbed) = prefixStates.start(bytes, count: prefix)
        COpenSSL_SHA256_Update(&context, bytes + absorbed, prefix - absorbed)
        var branch = context
        COpenSSL_SHA256_Update(&context, bytes + prefix, count - prefix)
        COpenSSL_SHA256_Final(prefixDigest, &branch)
        COpenSSL_SHA256_Final(whole, &context)
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
