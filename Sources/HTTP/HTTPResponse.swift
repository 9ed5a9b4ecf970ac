/// A complete HTTP response: status, headers and the whole body.
///
/// Non-2xx statuses are responses, not errors: the caller decides what a 429 or 503 means
/// (for example by reading `headers["Retry-After"]`). Only transport failures throw ``HTTPError``.
public struct HTTPResponse: Sendable {
    /// The status code, for example `200` or `429`.
    public var status: Int
    /// Response header fields; lookups are case-insensitive.
    public var headers: HTTPHeaders
    /// The response body.
    public var body: [UInt8]
    /// The protocol version the response arrived over.
    public var httpVersion: HTTPVersion

    /// Creates a response (transports build these; tests build them for stubs).
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Header fields.
    ///   - body: Body bytes.
    ///   - httpVersion: The protocol version; defaults to HTTP/1.1.
    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], httpVersion: HTTPVersion = .http1_1) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }

    /// Whether the status is 2xx, the common success check.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body decoded as UTF-8 (invalid sequences repaired), for logs and text payloads.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
