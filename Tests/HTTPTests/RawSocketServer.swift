import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-shot TCP server that answers the first request on each connection with canned bytes and
/// closes. Used for responses ``HTTPServer`` deliberately cannot produce (chunked bodies,
/// truncated bodies), to exercise the client's error paths. Runs on its own thread because
/// `accept` blocks.
final class RawSocketServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32

    /// - Parameter reply: The exact bytes written after the request headers arrive.
    init(reply: [UInt8]) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }  // listener closed
                var buffer = [UInt8](repeating: 0, count: 65536)
                var received: [UInt8] = []
                while !received.ends(with: Array("\r\n\r\n".utf8)) {
                    let count = read(client, &buffer, buffer.count)
                    if count <= 0 { break }
                    received += buffer[0..<count]
                }
                _ = reply.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                Glibc.close(client)
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    var url: String { "http://127.0.0.1:\(port)/" }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
