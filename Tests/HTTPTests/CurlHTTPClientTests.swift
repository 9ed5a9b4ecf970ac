import HTTP
import Testing

/// Client against the in-process server, loopback only. Serialized because several tests
/// measure concurrency and the build machine has two shared cores.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CurlHTTPClientTests {
    @Test func getAndPostRoundTrip() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let get = try await client.execute(
            HTTPRequest(url: server.url("/echo?q=hello%20world&status=203"), headers: ["X-Echo-Token": "abc"]),
            timeout: .seconds(5))
        #expect(get.status == 203)
        #expect(get.headers["x-echo-token"] == "abc")
        #expect(get.headers["X-METHOD"] == "GET")
        #expect(get.headers["x-query"] == "hello world")
        #expect(get.body.isEmpty)
        #expect(get.httpVersion == .http1_1)

        let payload = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let post = try await client.execute(
            HTTPRequest(method: .post, url: server.url("/echo"),
                        headers: ["Content-Type": "application/octet-stream", "X-Echo-Id": "42"], body: payload),
            timeout: .seconds(5))
        #expect(post.status == 200)
        #expect(post.headers["X-Method"] == "POST")
        #expect(post.headers["x-echo-id"] == "42")
        #expect(post.body == payload)

        let put = try await client.execute(HTTPRequest(method: .put, url: server.url("/echo"), body: Array("put".utf8)))
        #expect(put.headers["X-Method"] == "PUT")
        #expect(put.bodyText == "put")
        let delete = try await client.execute(HTTPRequest(method: .delete, url: server.url("/echo")))
        #expect(delete.headers["X-Method"] == "DELETE")
        let head = try await client.execute(HTTPRequest(method: .head, url: server.url("/bytes?count=10")))
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        let emptyPost = try await client.execute(HTTPRequest(method: .post, url: server.url("/echo")))
        #expect(emptyPost.status == 200)
        #expect(emptyPost.body.isEmpty)
    }

    @Test func thousandConcurrentRequestsEachGetTheirOwnResponse() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 32
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    let body = Array("request-\(index)".utf8)
                    let response = try await client.execute(
                        HTTPRequest(method: .post, url: server.url("/echo"), headers: ["X-Echo-Index": "\(index)"], body: body),
                        timeout: .seconds(60))
                    let matches = response.status == 200 && response.body == body
                        && response.headers["X-Echo-Index"] == "\(index)"
                    return matches ? 0 : 1
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(client.statistics.requestsSucceeded == 1_000)
        #expect(client.statistics.connectionsOpened <= 32)
        #expect(server.server.statistics.requestsHandled == 1_000)
    }

    @Test func slowHandlersRunConcurrently() async throws {
        // 2 MHD threads, 200 requests, 200 ms each: a thread-blocking bridge would need 20 s.
        let server = try TestServer(threadPoolSize: 2)
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 200
        configuration.maxTotalConnections = 200
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let response = try await client.execute(HTTPRequest(url: server.url("/delay?ms=200")), timeout: .seconds(30))
                    #expect(response.bodyText == "done")
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(5), "200 x 200 ms took \(elapsed)")
    }

    @Test func timeoutIsClassifiedAndRetryable() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let started = ContinuousClock.now
        let error = await thrownError {
            _ = try await client.execute(HTTPRequest(url: server.url("/delay?ms=15000")), timeout: .milliseconds(300))
        }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .timeout)
        #expect(httpError.isRetryable)
        #expect(httpError.curlCode == 28)
        #expect(ContinuousClock.now - started < .seconds(10), "the client timed out, not the 15 s server delay")
    }

    @Test func droppedConnectionIsRetryableReset() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let error = await thrownError {
            _ = try await client.execute(HTTPRequest(url: server.url("/drop")), timeout: .seconds(5))
        }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .connectionReset)
        #expect(httpError.isRetryable)
        // The client recovers on a fresh connection.
        let after = try await client.execute(HTTPRequest(url: server.url("/echo")), timeout: .seconds(5))
        #expect(after.status == 200)
    }

    @Test func refusedConnectionIsConnectionFailed() async throws {
        let closed = try TestServer()
        let url = closed.url("/echo")
        closed.server.stop()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let error = await thrownError { _ = try await client.execute(HTTPRequest(url: url), timeout: .seconds(5)) }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .connectionFailed)
        #expect(httpError.isRetryable)
    }

    @Test func responseBodyLimit() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxResponseBodySize = 4096
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let fits = try await client.execute(HTTPRequest(url: server.url("/bytes?count=4096")))
        #expect(fits.body.count == 4096)
        let error = await thrownError { _ = try await client.execute(HTTPRequest(url: server.url("/bytes?count=100000"))) }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .tooLarge)
        #expect(!httpError.isRetryable)
    }

    @Test func cancellationAbortsInFlightRequest() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let task = Task { try await client.execute(HTTPRequest(url: server.url("/delay?ms=20000")), timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(ContinuousClock.now - started < .seconds(10), "cancellation ended the request, not the 20 s delay")

        // Cancelled before it even starts.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.execute(HTTPRequest(url: server.url("/echo")))
        }
        await #expect(throws: CancellationError.self) { try await early.value }

        let after = try await client.execute(HTTPRequest(url: server.url("/echo")), timeout: .seconds(5))
        #expect(after.status == 200)
    }

    @Test func connectionsAreReused() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        for index in 0..<50 {
            let response = try await client.execute(HTTPRequest(url: server.url("/echo?q=\(index)")), timeout: .seconds(5))
            #expect(response.headers["X-Query"] == "\(index)")
        }
        #expect(client.statistics.connectionsOpened == 1)
        #expect(server.server.statistics.connectionsAccepted == 1)
    }

    @Test func shutdownFailsPendingAndLaterRequests() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()

        let pending = Task { try await client.execute(HTTPRequest(url: server.url("/delay?ms=10000")), timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(200))
        await client.shutdownAndWait()
        let error = await thrownError { _ = try await pending.value }
        #expect((error as? HTTPError)?.code == .shutdown)

        let late = await thrownError { _ = try await client.execute(HTTPRequest(url: server.url("/echo"))) }
        #expect((late as? HTTPError)?.code == .shutdown)
        #expect((late as? HTTPError)?.isRetryable == false)
        client.shutdown()  // idempotent
    }
}
