/// A complete request received by ``HTTPServer``, handed to the handler once the whole body
/// has arrived.
public struct HTTPServerRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The URL path without the query string, percent-decoded by libmicrohttpd (for example `/inApps/v1/history/123`).
    public var path: String
    /// Query parameters in request order, percent-decoded; a key without `=` has an empty value.
    public var queryItems: [(name: String, value: String)]
    /// Request header fields; lookups are case-insensitive.
    public var headers: HTTPHeaders
    /// The request body (at most ``HTTPServer/Configuration/maxRequestBodySize`` bytes).
    public var body: [UInt8]
    /// The protocol version of the request.
    public var httpVersion: HTTPVersion

    /// Creates a request; the server builds these, tests may build them to call handlers directly.
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The decoded path.
    ///   - queryItems: Decoded query parameters.
    ///   - headers: Header fields.
    ///   - body: Body bytes.
    ///   - httpVersion: The protocol version.
    public init(
        method: HTTPMethod, path: String, queryItems: [(name: String, value: String)] = [],
        headers: HTTPHeaders = [:], body: [UInt8] = [], httpVersion: HTTPVersion = .http1_1
    ) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }

    /// The first value of query parameter `name`, a convenience for handlers.
    /// - Parameter name: The parameter name (case-sensitive).
    /// - Returns: The value, or `nil` when absent.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}
