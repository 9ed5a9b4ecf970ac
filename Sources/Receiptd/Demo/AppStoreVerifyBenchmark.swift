import AppStore
import FakeAppStore
import Foundation
import HTTP
import Observability
import Pipeline

/// Verify-stage throughput for submissions that need Apple's servers (`transactionId` through the
/// App Store Server API), against the fake App Store with injected latency.
///
/// The real ``StageRunner`` runs the real ``VerifyStage`` (Server API client over `CurlHTTPClient`,
/// signed answers verified with the chain cache) over the in-memory transport, so the figure is the
/// stage's own: Kafka is measured by `bench pipeline`. With `maxInFlight` requests outstanding a
/// 250 ms round trip should cost little throughput; that is what the comparison shows.
struct AppStoreVerifyBenchmark {
    var submissions: Int
    var maxInFlight: Int

    /// What one run measured.
    struct Measurement {
        /// Verified submissions per second of wall time.
        var perSecond: Double
        /// Process CPU time (user + system, every thread: stage, client and the in-process fake App
        /// Store) per submission, in milliseconds. On a shared or saturated machine this says more
        /// about the code than the wall-clock rate does.
        var cpuMillisecondsPerSubmission: Double
    }

    /// Throughput and CPU cost with `latency` added to every App Store answer.
    func run(latency: Duration) async throws -> Measurement {
        try Self.allowDescriptors(atLeast: 2 * maxInFlight + 256)
        let credentials = try FakeAppStoreCredentials.generate()
        var configuration = FakeAppStoreConfiguration(bundleId: SubmissionGenerator.bundleId, credentials: credentials)
        configuration.faults.latency = latency
        configuration.threadPoolSize = 2
        let fake = try FakeAppStore(configuration: configuration)
        // The fake speaks HTTP/1.1 (one request per connection at a time), so in-flight requests need
        // as many connections; against Apple's HTTP/2 endpoints they multiplex over a few.
        var httpConfiguration = CurlHTTPClient.Configuration()
        httpConfiguration.maxConnectionsPerHost = maxInFlight
        httpConfiguration.maxTotalConnections = maxInFlight
        // Keep an easy handle per request in flight: when the runner refills a batch of records after a
        // pause, more transfers start at once than the default 128 idle handles cover.
        httpConfiguration.maxIdleHandles = maxInFlight
        let http = try CurlHTTPClient(configuration: httpConfiguration)
        defer { fake.stop(); http.shutdown() }
        let api = try AppStoreServerAPIClient(configuration: fake.serverAPIConfiguration(), signer: credentials.apiKey, transport: http)
        let verifier = AppStoreSubmissionVerifier(verifier: try SignedDataVerifier(configuration: fake.verifierConfiguration()),
                                                  serverAPI: api)

        let transport = InMemoryTransport(defaultPartitionCount: 8)
        let topics = Topics()
        let now = Date()
        for i in 0..<submissions {
            let purchase = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                               purchaseDate: now)
            let submission = IngestedSubmission(submissionId: "b-\(i)", bundleId: SubmissionGenerator.bundleId, userId: "u\(i)",
                                                kind: .transactionId, payload: purchase.transactionId,
                                                submittedAt: now, ingestedAt: now)
            transport.produce(topic: topics.ingested, key: Array(submission.recordKey.utf8), value: try ContractCoding.encode(submission))
        }
        let runner = StageRunner(stage: VerifyStage(verifier: verifier),
                                 source: transport.source(group: "bench", topics: [topics.ingested], finishWhenIdle: true),
                                 sink: transport.sink,
                                 configuration: StageRunnerConfiguration(topics: topics, maxInFlight: maxInFlight),
                                 logger: .disabled, metrics: MetricsRegistry())
        let clock = ContinuousClock()
        let cpuBefore = processCPUSeconds()
        let elapsed = try await clock.measure { try await runner.run() }
        let cpu = processCPUSeconds() - cpuBefore
        let verified = transport.records(in: topics.verified).count
        guard verified == submissions else {
            let reasons = transport.records(in: topics.deadLetter).compactMap { RecordHeaders.value(of: RecordHeaders.error, in: $0.headers) }
            throw ValidationError("only \(verified) of \(submissions) verified (rejected: \(transport.records(in: topics.rejected).count), "
                                  + "dead letters: \(reasons.count): \(Set(reasons).prefix(3).joined(separator: "; ")))")
        }
        let seconds = elapsed / .seconds(1)
        return Measurement(perSecond: Double(submissions) / seconds,
                           cpuMillisecondsPerSubmission: cpu * 1000 / Double(submissions))
    }

    /// Client and server ends of every connection live in this process: 2 descriptors per request in
    /// flight. Raises the soft `RLIMIT_NOFILE` up to the hard limit when that is needed (the usual 1,024
    /// soft limit would otherwise fail connections mid-run and distort the figure).
    /// - Throws: ``ValidationError`` when even the hard limit is too low.
    private static func allowDescriptors(atLeast needed: Int) throws {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(needed) else { return }
        guard limit.rlim_max >= rlim_t(needed) else {
            throw ValidationError("bench appstore needs \(needed) file descriptors (2 per request in flight); "
                                  + "the hard limit is \(limit.rlim_max): lower --max-in-flight or raise ulimit -Hn")
        }
        limit.rlim_cur = rlim_t(needed)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
