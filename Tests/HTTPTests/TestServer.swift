import HTTP

/// An in-process server with the routes the tests need, bound to an ephemeral loopback port.
///
/// Routes:
/// - `/echo`: replies with the request body, the method in `X-Method`, every `X-Echo-*`
///   header copied back, and the status from `?status=`.
/// - `/delay?ms=N`: sleeps N ms (the fake App Store's latency knob), then replies `done`.
/// - `/drop`: drops the connection without replying.
/// - `/bytes?count=N`: replies with N bytes.
struct TestServer {
    let server: HTTPServer

    init(threadPoolSize: Int = 2, maxRequestBodySize: Int = 1 << 20) throws {
        server = try HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, threadPoolSize: threadPoolSize,
                                 maxRequestBodySize: maxRequestBodySize),
            handler: Self.handle)
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }

    @Sendable static func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        switch request.path {
        case "/echo":
            var headers: HTTPHeaders = ["X-Method": request.method.rawValue]
            for field in request.headers where field.name.lowercased().hasPrefix("x-echo-") {
                headers.add(name: field.name, value: field.value)
            }
            if let query = request.queryValue("q") { headers["X-Query"] = query }
            let status = request.queryValue("status").flatMap { Int($0) } ?? 200
            return HTTPServerResponse(status: status, headers: headers, body: request.body)
        case "/delay":
            let ms = request.queryValue("ms").flatMap { Int($0) } ?? 100
            try? await Task.sleep(for: .milliseconds(ms))
            return .text("done")
        case "/drop":
            return .dropConnection
        case "/bytes":
            let count = request.queryValue("count").flatMap { Int($0) } ?? 0
            return HTTPServerResponse(body: [UInt8](repeating: 0x61, count: count))
        default:
            return .text("not found", status: 404)
        }
    }
}

/// Runs `body` and returns the error it threw, or `nil`.
func thrownError(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}
