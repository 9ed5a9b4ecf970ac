#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A numeric IPv4/IPv6 bind address, built without DNS so binding can never block or surprise.
struct SocketAddress {
    private enum Storage {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }
    private let storage: Storage

    /// Parses `host` as an IPv4 or IPv6 literal (`localhost` means 127.0.0.1, empty means any).
    /// - Throws: ``HTTPServerError`` with ``HTTPServerError/Code/invalidConfiguration`` otherwise.
    init(host: String, port: Int) throws(HTTPServerError) {
        let literal = host == "localhost" ? "127.0.0.1" : (host.isEmpty ? "0.0.0.0" : host)
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(port).bigEndian
            storage = .v4(v4)
            return
        }
        let unbracketed = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, unbracketed, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(port).bigEndian
            storage = .v6(v6)
            return
        }
        throw HTTPServerError(code: .invalidConfiguration,
                              message: "HTTPServer.Configuration: host must be a numeric IPv4/IPv6 address, got \(host)")
    }

    /// Whether the address is IPv6 (libmicrohttpd needs `MHD_USE_IPv6` then).
    var isIPv6: Bool {
        if case .v6 = storage { return true }
        return false
    }

    /// Lends the address as a `struct sockaddr *` for the duration of `body`.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        switch storage {
        case .v4(var address):
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(var address):
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }
}
