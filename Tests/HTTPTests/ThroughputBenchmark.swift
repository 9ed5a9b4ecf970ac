import HTTP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Not a correctness test: prints requests/s for 10,000 small requests with 64 in flight.
/// Run with `HTTP_BENCH=1 swift test -c release --filter ThroughputBenchmark`.
@Suite(.enabled(if: getenv("HTTP_BENCH") != nil))
struct ThroughputBenchmark {
    @Test func tenThousandSmallRequests() async throws {
        let server = try TestServer(threadPoolSize: 2)
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 64
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let total = 10_000, inFlight = 64
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask {
                    let response = try await client.execute(
                        HTTPRequest(method: .post, url: server.url("/echo"), body: Array("req-\(index)".utf8)),
                        timeout: .seconds(30))
                    precondition(response.status == 200)
                }
            }
            while next < inFlight { add() }
            while try await group.next() != nil {
                if next < total { add() }
            }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("throughput: \(total) requests, \(inFlight) in flight: \(Int(Double(total) / seconds)) req/s "
            + "(\(client.statistics.connectionsOpened) connections)")
        #expect(client.statistics.requestsSucceeded == total)
    }
}
