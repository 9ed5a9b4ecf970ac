import HTTP
import Testing

@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPServerTests {
    @Test func bindsEphemeralPort() throws {
        let first = try TestServer()
        let second = try TestServer()
        defer { first.server.stop(); second.server.stop() }
        #expect(first.server.port > 0)
        #expect(first.server.port != second.server.port)
    }

    @Test func oversizedBodyGets413WithoutCallingHandler() async throws {
        let server = try TestServer(maxRequestBodySize: 1024)
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let small = [UInt8](repeating: 1, count: 1024)
        let ok = try await client.execute(HTTPRequest(method: .post, url: server.url("/echo"), body: small))
        #expect(ok.status == 200)
        #expect(ok.body == small)

        let big = [UInt8](repeating: 2, count: 64 * 1024)
        let rejected = try await client.execute(HTTPRequest(method: .post, url: server.url("/echo"), body: big))
        #expect(rejected.status == 413)
        #expect(server.server.statistics.requestsRejectedTooLarge == 1)
        #expect(server.server.statistics.requestsHandled == 1)

        // Chunked upload (no Content-Length up front) is limited too.
        let chunked = try await client.execute(HTTPRequest(
            method: .post, url: server.url("/echo"), headers: ["Transfer-Encoding": "chunked"], body: big))
        #expect(chunked.status == 413)
    }

    @Test func stopWithHandlersInFlightIsClean() async throws {
        let server = try TestServer()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let inFlight = (0..<5).map { _ in
            Task { try await client.execute(HTTPRequest(url: server.url("/delay?ms=15000")), timeout: .seconds(30)) }
        }
        // Wait until all five are suspended in the handler.
        while server.server.statistics.connectionsAccepted < 5 { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        server.server.stop()
        #expect(ContinuousClock.now - started < .seconds(10), "stop did not wait for the 15 s handlers")
        for task in inFlight {
            let error = await thrownError { _ = try await task.value }
            #expect((error as? HTTPError)?.isRetryable == true, "\(String(describing: error))")
        }
        server.server.stop()  // idempotent
    }
}
