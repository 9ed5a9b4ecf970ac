import HTTP
import Testing

/// Error paths that need responses a well-behaved server never sends.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct CurlErrorPathTests {
    @Test func chunkedBodyOverLimitIsTooLarge() async throws {
        // No Content-Length, so libcurl cannot refuse up front; the write callback must.
        let chunk = String(repeating: "x", count: 3000)
        let hex = String(chunk.utf8.count, radix: 16)
        let reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "\(hex)\r\n\(chunk)\r\n\(hex)\r\n\(chunk)\r\n0\r\n\r\n"
        let server = try RawSocketServer(reply: Array(reply.utf8))
        defer { server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxResponseBodySize = 4000
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let error = await thrownError { _ = try await client.execute(HTTPRequest(url: server.url), timeout: .seconds(5)) }
        #expect((error as? HTTPError)?.code == .tooLarge)
    }

    @Test func truncatedBodyIsRetryableReset() async throws {
        let reply = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"
        let server = try RawSocketServer(reply: Array(reply.utf8))
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let error = await thrownError { _ = try await client.execute(HTTPRequest(url: server.url), timeout: .seconds(5)) }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .connectionReset)
        #expect(httpError.isRetryable)
    }

    @Test func interimResponseHeadersAreDiscarded() async throws {
        let reply = "HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n"
            + "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n"
        let server = try RawSocketServer(reply: Array(reply.utf8))
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPRequest(url: server.url), timeout: .seconds(5))
        #expect(response.status == 429)
        #expect(response.headers["retry-after"] == "7")
        #expect(response.headers["X-Interim"] == nil)
    }

    @Test func tlsToPlainServerIsNotRetryable() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let error = await thrownError {
            _ = try await client.execute(HTTPRequest(url: "https://127.0.0.1:\(server.server.port)/"), timeout: .seconds(5))
        }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .tls)
        #expect(!httpError.isRetryable)
    }
}
