import Foundation
@testable import HTTP
import Testing

/// The client's multi thread runs libcurl's event API over epoll: these check what that loop must
/// keep doing with many sockets open at once (every transfer completes and gets its own answer,
/// one cancellation touches one transfer, shutdown ends them all, no descriptor outlives a client).
/// Behaviour only; no timing bounds.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CurlEventLoopTests {
    @Test func manyConnectionsAtOnceAllComplete() async throws {
        // Every request waits 300 ms in its handler, so all 600 are in flight together, each on its
        // own HTTP/1.1 connection: 600 sockets watched by the epoll instance at once, spread over
        // three multi handles.
        let server = try TestServer(threadPoolSize: 2)
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 600
        configuration.maxTotalConnections = 600
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<600 {
                group.addTask {
                    let response = try await client.execute(
                        HTTPRequest(url: server.url("/delay?ms=300&i=\(index)")), timeout: .seconds(60))
                    return response.status == 200 && response.bodyText == "done" ? 0 : 1
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(client.statistics.requestsSucceeded == 600)
        #expect(client.statistics.requestsFailed == 0)
        #expect(client.statistics.connectionsOpened > 1, "the requests ran side by side, not one by one")

        // The same connections serve a second wave.
        let opened = client.statistics.connectionsOpened
        let again = try await client.execute(HTTPRequest(url: server.url("/echo?q=again")), timeout: .seconds(10))
        #expect(again.headers["X-Query"] == "again")
        #expect(client.statistics.connectionsOpened == opened)
    }

    @Test func largePoolsAreSplitOverMultiHandles() {
        var configuration = CurlHTTPClient.Configuration()
        #expect(CurlMultiShard.count(for: configuration) == 1, "the HTTP/2 defaults keep one multi handle")
        configuration.maxTotalConnections = 256
        configuration.maxConnectionsPerHost = 256
        #expect(CurlMultiShard.count(for: configuration) == 1)
        configuration.maxTotalConnections = 2048
        configuration.maxConnectionsPerHost = 2048
        #expect(CurlMultiShard.count(for: configuration) == 8)
        configuration.maxTotalConnections = 0  // unlimited in total: the per-host bound decides
        #expect(CurlMultiShard.count(for: configuration) == 8)
        configuration.maxConnectionsPerHost = 0
        #expect(CurlMultiShard.count(for: configuration) == 1)
        configuration.maxTotalConnections = 100_000
        #expect(CurlMultiShard.count(for: configuration) == CurlMultiShard.maxShards)
    }

    @Test func splitPoolStillReusesConnections() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 2048
        configuration.maxTotalConnections = 2048
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        for index in 0..<30 {
            let response = try await client.execute(HTTPRequest(url: server.url("/echo?q=\(index)")), timeout: .seconds(5))
            #expect(response.headers["X-Query"] == "\(index)")
        }
        #expect(client.statistics.connectionsOpened == 1, "one request at a time needs one connection")
    }

    @Test func cancellingOneOfManyLeavesTheOthersRunning() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 64
        let client = try CurlHTTPClient(configuration: configuration)
        defer { client.shutdown() }

        let others = (0..<40).map { index in
            Task { try await client.execute(HTTPRequest(url: server.url("/delay?ms=1500&i=\(index)")), timeout: .seconds(60)) }
        }
        let victim = Task { try await client.execute(HTTPRequest(url: server.url("/delay?ms=20000")), timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))  // let the victim reach libcurl, not just the inbox
        victim.cancel()
        await #expect(throws: CancellationError.self) { try await victim.value }

        for task in others {
            let response = try await task.value
            #expect(response.bodyText == "done")
        }
        #expect(client.statistics.requestsSucceeded == 40)
        #expect(client.statistics.requestsFailed == 1)
    }

    @Test func shutdownFailsEveryTransferInFlight() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 200
        configuration.maxTotalConnections = 200
        let client = try CurlHTTPClient(configuration: configuration)

        // More transfers than connections, so some wait inside libcurl for a connection.
        let pending = (0..<300).map { _ in
            Task { try await client.execute(HTTPRequest(url: server.url("/delay?ms=20000")), timeout: .seconds(60)) }
        }
        try await Task.sleep(for: .milliseconds(300))
        await client.shutdownAndWait()

        var shutdownErrors = 0
        for task in pending {
            if case .failure(let error) = await task.result, (error as? HTTPError)?.code == .shutdown { shutdownErrors += 1 }
        }
        #expect(shutdownErrors == 300)
        #expect(client.statistics.requestsFailed == 300)
    }

    @Test func idleClientWakesForLateRequests() async throws {
        let server = try TestServer()
        defer { server.server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        _ = try await client.execute(HTTPRequest(url: server.url("/echo")), timeout: .seconds(5))
        // Longer than the loop's idle cap, with no libcurl timer pending: only the doorbell can
        // start the next request.
        try await Task.sleep(for: .milliseconds(1_200))
        let late = try await client.execute(HTTPRequest(url: server.url("/echo?q=late")), timeout: .seconds(5))
        #expect(late.headers["X-Query"] == "late")
        #expect(client.statistics.connectionsOpened == 1)
    }

    @Test func shutdownClosesTheLoopsDescriptors() async throws {
        // Each client owns an epoll instance and an eventfd; 40 clients leaking them would add 80.
        // Other suites may open a few of their own meanwhile, hence the margin.
        let before = Self.eventDescriptorCount()
        for _ in 0..<40 {
            let client = try CurlHTTPClient()
            await client.shutdownAndWait()
        }
        let after = Self.eventDescriptorCount()
        #expect(after - before < 20, "event descriptors before \(before), after \(after)")
    }

    /// Open epoll and eventfd descriptors of this process, from `/proc/self/fd`.
    private static func eventDescriptorCount() -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.count { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else {
                return false
            }
            return target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]"
        }
    }
}
