import COpenSSL

/// A failed OpenSSL call (key or certificate generation, signing, loading), with the drained
/// OpenSSL error queue. Verification failures are reported as ``VerificationError`` instead.
public struct OpenSSLError: Error, Sendable, CustomStringConvertible {
    /// The OpenSSL function or step that failed, e.g. `X509_sign`.
    public let operation: String
    /// The OpenSSL error queue entries, oldest first.
    public let queue: [String]

    /// `operation failed: queue…`.
    public var description: String {
        queue.isEmpty ? "\(operation) failed" : "\(operation) failed: \(queue.joined(separator: "; "))"
    }

    /// Captures and clears the calling thread's OpenSSL error queue.
    init(_ operation: String) {
        self.operation = operation
        self.queue = OpenSSLError.drainQueue()
    }

    static func drainQueue() -> [String] {
        var entries: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            if entries.count < 8 { entries.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        }
        return entries
    }
}
