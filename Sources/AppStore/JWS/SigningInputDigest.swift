import Foundation

/// The SHA-256 of a JWS's signing input (its bytes up to the second dot), computed alongside the
/// verified-JWS cache's key (``VerifiedJWSCache/Key/withSigningInput(_:kind:)``) and handed to the
/// signature check of the same JWS, so a cache miss does not hash the bytes a second time.
struct SigningInputDigest: Sendable {
    typealias Words = (UInt64, UInt64, UInt64, UInt64)

    /// How many bytes were hashed: the check uses the digest only for a signing input this long
    /// (the same JWS splits the same way).
    let length: Int
    let words: Words

    /// The signing input's length: up to the second dot of a JWS of three segments, else nil (the
    /// verifier refuses such input as malformed before any signature is checked).
    static func signingInputLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        (try? JWSVerifier.segmentBoundaries(bytes))?.1
    }

    /// Copies the 32 digest bytes to `output`.
    func copy(to output: UnsafeMutablePointer<UInt8>) {
        withUnsafeBytes(of: words) { UnsafeMutableRawPointer(output).copyMemory(from: $0.baseAddress!, byteCount: 32) }
    }
}
