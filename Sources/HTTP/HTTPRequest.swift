/// An HTTP request to send through an ``HTTPTransport``.
///
/// A plain value type so requests can be built, logged, retried and handed across tasks freely.
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute URL, for example `https://api.storekit.itunes.apple.com/inApps/v1/...`.
    public var url: String
    /// Request header fields, sent in order.
    public var headers: HTTPHeaders
    /// The request body; empty for none.
    public var body: [UInt8]

    /// Creates a request.
    /// - Parameters:
    ///   - method: The method; defaults to `GET`.
    ///   - url: The absolute `http` or `https` URL.
    ///   - headers: Header fields to send.
    ///   - body: Body bytes; empty means no body.
    public init(method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// Checks what can be checked without the network, so malformed input fails fast and
    /// is never mistaken for a retryable network error.
    /// - Throws: ``HTTPError`` with code ``HTTPError/Code/invalidRequest``.
    public func validate() throws(HTTPError) {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw HTTPError(code: .invalidRequest, message: "URL must be absolute http(s): \(url)")
        }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw HTTPError(code: .invalidRequest, message: "URL contains whitespace or control characters")
        }
        for field in headers {
            if field.name.isEmpty || field.name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x3A || $0 == 0x7F }) {
                throw HTTPError(code: .invalidRequest, message: "invalid header name: \(field.name)")
            }
            if field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
                throw HTTPError(code: .invalidRequest, message: "header \(field.name) contains CR, LF or NUL")
            }
        }
    }
}
