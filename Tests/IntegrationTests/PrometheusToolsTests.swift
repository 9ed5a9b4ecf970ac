import Foundation
import HTTP
import Testing

/// receiptd's metrics and alert rules checked by Prometheus's own tools (Debian's `prometheus`
/// package, which `scripts/test` installs): `promtool check metrics` on live workers' `/metrics`,
/// `promtool check rules` and `promtool test rules` on `Deploy/prometheus`, and a real Prometheus
/// server scraping `receiptd dev` and answering queries over its HTTP API.
@Suite(.timeLimit(.minutes(4))) struct PrometheusToolsTests {
    static let promtool = "/usr/bin/promtool"
    static let prometheus = "/usr/bin/prometheus"
    static let rules = BrokerFixture.repository.appendingPathComponent("Deploy/prometheus")

    @Test func alertRulesPassPromtoolCheckAndTheirUnitTests() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.promtool), "install Debian's prometheus package (scripts/test does)")
        let check = try Tool.run(Self.promtool, ["check", "rules", Self.rules.appendingPathComponent("receiptd-alerts.yaml").path])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("SUCCESS: 8 rules found"), "\(check.output)")
        let test = try Tool.run(Self.promtool, ["test", "rules", "receiptd-alerts.test.yaml"], directory: Self.rules)
        #expect(test.status == 0, "\(test.output)")
        #expect(test.output.contains("SUCCESS"), "\(test.output)")
    }

    @Test func prometheusScrapesReceiptdDevAndPromtoolAcceptsEveryWorkersMetrics() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.prometheus), "install Debian's prometheus package (scripts/test does)")
        try #require(Kcat.available, "kcat is needed to produce a record")
        let directory = try scratchDirectory("receiptd-prometheus")
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = try FreePorts.consecutive(6)  // dev, its four workers, then Prometheus
        let targets = (0..<5).map { "127.0.0.1:\(base + $0)" }
        let catalogue = BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path
        let rig = try DevRig(overlay: #"{"topics": {"partitions": 2}, "fulfil": {"catalogue": "\#(catalogue)"}, "observability": {"statisticsIntervalSeconds": 1}}"#,
                             in: directory, observabilityPort: base)
        try await rig.start()
        #expect(rig.diagnostics.contains("metrics at http://127.0.0.1:\(base)/metrics"), "\(rig.diagnostics)")
        // Something for the labelled series to count: one rejection at ingest.
        try Kcat(bootstrap: rig.bootstrap).produce("receipts.submitted", [(key: "bundle/user", value: Array("not json".utf8))])

        let http = try CurlHTTPClient()
        let ingest = "http://\(targets[1])/metrics"
        try await waitUntil("ingest counts the rejection", timeout: .seconds(60)) {
            let body = try await Self.get(http, ingest)
            return body.contains(#"receiptd_rejections_total{reason="invalid-json",stage="ingest"} 1"#)
        }
        for target in targets {
            let body = try await Self.get(http, "http://\(target)/metrics")
            #expect(body.contains("# TYPE receiptd_build_info gauge"), "\(target)")
            let check = try Tool.run(Self.promtool, ["check", "metrics"], input: body)
            #expect(check.status == 0 && check.output.isEmpty, "promtool check metrics on \(target): \(check.output)")
        }

        let listen = "127.0.0.1:\(base + 5)"
        try """
        global: { scrape_interval: 1s, evaluation_interval: 1s }
        rule_files: ["\(Self.rules.appendingPathComponent("receiptd-alerts.yaml").path)"]
        scrape_configs:
          - job_name: receiptd
            static_configs: [{ targets: [\(targets.map { "\"\($0)\"" }.joined(separator: ", "))] }]
        """.write(to: directory.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: Self.prometheus)
        server.arguments = ["--config.file=\(directory.appendingPathComponent("prometheus.yml").path)",
                            "--storage.tsdb.path=\(directory.appendingPathComponent("tsdb").path)",
                            "--web.listen-address=\(listen)"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }

        // Every target up and ready, as Prometheus itself scraped it.
        try await waitUntil("Prometheus sees five ready receiptd targets", timeout: .seconds(90)) {
            try await Self.query(http, listen, "sum(up{job=\"receiptd\"}) + sum(receiptd_ready{job=\"receiptd\"})") == 10
        }
        let rejected = try await Self.query(http, listen,
                                            "sum(receiptd_rejections_total{job=\"receiptd\",stage=\"ingest\",reason=\"invalid-json\"})")
        #expect(rejected == 1)
        let roles = try await Self.query(http, listen, "count(count by (role) (receiptd_build_info{job=\"receiptd\"}))")
        #expect(roles == 5, "dev, ingest, verify, fulfil and owners")
        let assigned = try await Self.query(http, listen, "sum(receiptd_kafka_assigned_partitions{job=\"receiptd\"})")
        #expect(assigned == 40, "each stage's input and its four retry tiers, two partitions each")

        let stopped = try #require(await rig.stop(), "receiptd dev did not stop: \(rig.diagnostics)")
        #expect(stopped.normal && stopped.status == 0)
    }

    @Test func promtoolAcceptsTheFakeAppStoresMetrics() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.promtool), "install Debian's prometheus package (scripts/test does)")
        let port = try FreePorts.consecutive(1)
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: CrashRestartTests.binary)
        fake.arguments = ["fake-appstore", "--port", "0", "--metrics-port", String(port), "--samples", "1"]
        fake.environment = ProcessInfo.processInfo.environment.merging(["RECEIPTD_PARENT_PID": String(getpid())]) { _, new in new }
        let output = Pipe()
        fake.standardOutput = output
        fake.standardError = FileHandle.nullDevice
        try fake.run()
        defer { fake.terminate(); fake.waitUntilExit() }
        let announced = await DevCommandTests.within(.seconds(30)) {
            await Self.line(startingWith: "metrics: ", in: output.fileHandleForReading)
        }
        #expect(announced == "metrics: http://127.0.0.1:\(port)/metrics")
        let body = try await Self.get(try CurlHTTPClient(), "http://127.0.0.1:\(port)/metrics")
        // The fake App Store is the receiptd executable too, so jemalloc is its allocator.
        #expect(body.contains(#"receiptd_build_info{allocator="jemalloc 5."#) && body.contains(#"librdkafka=""#)
                && body.contains(#"role="fake-appstore""#), "\(body)")
        #expect(body.contains(#"receiptd_fake_appstore_requests_total{kind="requests"} 0"#), "\(body)")
        let check = try Tool.run(Self.promtool, ["check", "metrics"], input: body)
        #expect(check.status == 0 && check.output.isEmpty, "\(check.output)")
    }

    /// The first line written to `handle` that starts with `prefix`, or nil if the output ends first.
    static func line(startingWith prefix: String, in handle: FileHandle) async -> String? {
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { continuation.finish() } else { continuation.yield(data) }
        }
        defer { handle.readabilityHandler = nil }
        var buffer = Data()
        for await chunk in chunks {
            buffer.append(chunk)
            let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return String(line) }
        }
        return nil
    }

    /// The body of a GET, which must answer 200.
    static func get(_ http: CurlHTTPClient, _ url: String) async throws -> String {
        let response = try await http.execute(HTTPRequest(method: .get, url: url), timeout: .seconds(5))
        guard response.status == 200 else { throw KcatError(description: "GET \(url) answered \(response.status)") }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// An instant query's single scalar result, or nil when it has no result (yet).
    static func query(_ http: CurlHTTPClient, _ listen: String, _ expression: String) async throws -> Double? {
        var components = URLComponents(string: "http://\(listen)/api/v1/query")!
        components.queryItems = [URLQueryItem(name: "query", value: expression)]
        // A literal `+` in a query string reads as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let body = try await get(http, components.url!.absoluteString)
        let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        let data = json?["data"] as? [String: Any]
        let result = (data?["result"] as? [[String: Any]])?.first
        return ((result?["value"] as? [Any])?.last as? String).flatMap(Double.init)
    }

    /// Re-checks `condition` (each check is an HTTP round trip) until it holds or `timeout` passes.
    func waitUntil(_ what: String, timeout: Duration, _ condition: @escaping @Sendable () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(250))
        }
        Issue.record("timed out: \(what)")
        throw KcatError(description: "timed out: \(what)")
    }
}

/// Runs a command-line tool to completion.
enum Tool {
    static func run(_ path: String, _ arguments: [String], input: String? = nil,
                    directory: URL? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// Ports nobody listens on right now, found by binding them.
enum FreePorts {
    /// The first of `count` consecutive free ports on 127.0.0.1, below the kernel's ephemeral range:
    /// there, between this check and the test's own bind, the mock brokers and outgoing connections
    /// of the tests running alongside (which take ephemeral ports) cannot take one.
    static func consecutive(_ count: Int) throws -> Int {
        let ephemeralLow = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32_768
        let highest = max(ephemeralLow - count, 10_001)
        for _ in 0..<50 {
            let base = Int.random(in: 10_000...highest)
            var servers: [HTTPServer] = []
            defer { servers.forEach { $0.stop() } }
            for offset in 0..<count {
                guard let server = try? HTTPServer(configuration: .init(host: "127.0.0.1", port: base + offset),
                                                   handler: { _ in .text("") }) else { break }
                servers.append(server)
            }
            if servers.count == count { return base }
        }
        throw KcatError(description: "no \(count) consecutive free ports")
    }
}
