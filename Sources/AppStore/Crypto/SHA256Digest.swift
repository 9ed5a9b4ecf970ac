import COpenSSL

/// One-shot SHA-256 through OpenSSL's `SHA256()` (no EVP fetch, no allocation).
enum SHA256Digest {
    /// Hashes `count` bytes at `bytes` into the 32-byte buffer `output`.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawPointer, count: Int, into output: UnsafeMutablePointer<UInt8>) {
        _ = SHA256(bytes.assumingMemoryBound(to: UInt8.self), count, output)
    }

    /// SHA-256 of a byte array.
    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = SHA256(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, output.baseAddress)
            }
        }
        return digest
    }
}
