import HTTP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// HTTP/2 multiplexing against a real TLS h2 server, which the loopback test server (libmicrohttpd,
/// HTTP/1.1 only) cannot provide. Opt-in: set `HTTP_H2_URL` (e.g. `https://127.0.0.1:8443/index.txt`
/// served by `nghttpd`) and `HTTP_H2_CA_FILE` (the server's self-signed certificate).
@Suite(.enabled(if: getenv("HTTP_H2_URL") != nil))
struct HTTP2LiveTests {
    @Test(arguments: [50, 200])
    func concurrentRequestsAreMultiplexed(count: Int) async throws {
        let url = String(cString: getenv("HTTP_H2_URL"))
        var configuration = CurlHTTPClient.Configuration()
        configuration.caFile = getenv("HTTP_H2_CA_FILE").map { String(cString: $0) }
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let versions = try await withThrowingTaskGroup(of: HTTPVersion.self) { group in
            for _ in 0..<count {
                group.addTask { try await client.execute(HTTPRequest(url: url), timeout: .seconds(20)).httpVersion }
            }
            return try await group.reduce(into: Set<HTTPVersion>()) { $0.insert($1) }
        }
        #expect(versions == [.http2])
        print("h2: \(count) concurrent requests used \(client.statistics.connectionsOpened) connection(s)")
        // Up to the server's stream limit (100 for nghttpd) one connection carries everything;
        // beyond it libcurl opens more, bounded by maxConnectionsPerHost.
        if count <= 100 {
            #expect(client.statistics.connectionsOpened == 1)
        } else {
            #expect(client.statistics.connectionsOpened <= configuration.maxConnectionsPerHost)
        }
    }

    @Test func untrustedCertificateIsNonRetryableTLSError() async throws {
        let url = String(cString: getenv("HTTP_H2_URL"))
        let client = try CurlHTTPClient()  // system CA bundle: does not trust the test certificate
        defer { client.shutdown() }
        let error = await thrownError { _ = try await client.execute(HTTPRequest(url: url), timeout: .seconds(10)) }
        let httpError = try #require(error as? HTTPError)
        #expect(httpError.code == .tls)
        #expect(!httpError.isRetryable)
    }
}
