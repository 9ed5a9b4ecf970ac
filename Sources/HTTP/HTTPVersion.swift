/// The HTTP protocol version a response was carried over.
///
/// Exposed so callers (and tests) can confirm that HTTP/2 multiplexing was actually negotiated.
public struct HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    /// The major version number (1, 2 or 3).
    public var major: Int
    /// The minor version number (0 or 1 for HTTP/1.x, otherwise 0).
    public var minor: Int

    /// Creates a version.
    /// - Parameters:
    ///   - major: The major version number.
    ///   - minor: The minor version number.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
    /// HTTP/2.
    public static let http2 = HTTPVersion(major: 2, minor: 0)
    /// HTTP/3.
    public static let http3 = HTTPVersion(major: 3, minor: 0)

    /// Parses a wire token such as `"HTTP/1.1"` or `"HTTP/2"`.
    /// - Parameter token: The protocol token from a request or status line.
    /// - Returns: The version, or `nil` when the token is not `HTTP/<major>[.<minor>]`.
    public init?(token: String) {
        guard token.hasPrefix("HTTP/") else { return nil }
        let numbers = token.dropFirst(5).split(separator: ".", omittingEmptySubsequences: false)
        guard let major = numbers.first.flatMap({ Int($0) }) else { return nil }
        let minor = numbers.count > 1 ? Int(numbers[1]) : 0
        guard let minor, numbers.count <= 2 else { return nil }
        self.init(major: major, minor: minor)
    }

    /// The wire token, `HTTP/1.1` or `HTTP/2`.
    public var description: String {
        major >= 2 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)"
    }
}
