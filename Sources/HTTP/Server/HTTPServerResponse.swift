/// What an ``HTTPServer`` handler returns: a normal response, or a fault to inject.
///
/// Fault injection lives here (rather than in the handler signature) so the fake App Store can
/// choose per request, e.g. "every fifth request drops the connection".
public struct HTTPServerResponse: Sendable {
    private enum Action: Sendable { case respond, dropConnection }

    /// The status code.
    public var status: Int
    /// Response header fields. `Content-Length` is computed by the server.
    public var headers: HTTPHeaders
    /// The response body.
    public var body: [UInt8]
    private var action: Action = .respond

    /// Creates a normal response.
    /// - Parameters:
    ///   - status: The status code; defaults to 200.
    ///   - headers: Header fields.
    ///   - body: Body bytes.
    public init(status: Int = 200, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A fault: close the TCP connection without sending any response bytes, as a crashed or
    /// overloaded upstream would. Clients see an empty reply (``HTTPError/Code/connectionReset``).
    public static var dropConnection: HTTPServerResponse {
        var response = HTTPServerResponse(status: 0)
        response.action = .dropConnection
        return response
    }

    /// Whether this response asks the server to drop the connection instead of replying.
    public var dropsConnection: Bool { action == .dropConnection }

    /// A UTF-8 text response with a `text/plain` content type.
    /// - Parameters:
    ///   - text: The body text.
    ///   - status: The status code; defaults to 200.
    /// - Returns: The response.
    public static func text(_ text: String, status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    /// A JSON response from already-encoded bytes.
    /// - Parameters:
    ///   - body: UTF-8 JSON bytes.
    ///   - status: The status code; defaults to 200.
    /// - Returns: The response.
    public static func json(_ body: [UInt8], status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }
}
