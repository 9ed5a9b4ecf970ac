import AppStore
import Foundation
import Observability
import Pipeline

/// The in-memory world `bench stages` measures in: `count` fresh genuine submissions on an
/// ``InMemoryTransport``, the same submissions on a second one for the stages that only measure
/// the runner (their outputs must not reach verify), the test chain's verifiers and the catalogue.
struct StagesBench {
    /// What one pass of a stage over every record cost.
    struct Pass {
        var seconds: Double
        var cpuMicrosecondsPerRecord: Double
        var faultsPerRecord: Double
    }

    let count: Int
    let topics = Topics()
    let transport = InMemoryTransport(defaultPartitionCount: 32)
    let plumbing = InMemoryTransport(defaultPartitionCount: 32)
    let catalogue: ProductCatalogue
    private let root: X509Certificate
    private let runnerConfiguration: StageRunnerConfiguration

    init(count: Int) throws {
        self.count = count
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400 * 30))
        root = pki.root
        var generator = SubmissionGenerator(signer: pki.signer, forger: pki.signer, seed: 11)
        let submissions = try (0..<count).map { _ in try generator.nextGenuine() }
        for submission in submissions {
            transport.produce(topic: topics.submitted, key: Array(submission.key.utf8), value: submission.value)
            plumbing.produce(topic: topics.submitted, key: Array(submission.key.utf8), value: submission.value)
        }
        catalogue = try ProductCatalogue(contentsOfFile: PipelineHarness.cataloguePath())
        runnerConfiguration = StageRunnerConfiguration(topics: topics, maxInFlight: 256)
    }

    /// A fresh verifier of the test chain, its verified-JWS cache large enough for every JWS (so a
    /// second pass over the same records measures cache hits only).
    func verifier() throws -> AppStoreSubmissionVerifier {
        var configuration = SignedDataVerifierConfiguration(trustAnchors: [root])
        configuration.environment = .any
        configuration.limits.verifiedCacheCapacity = max(count, 1)
        return AppStoreSubmissionVerifier(verifier: try SignedDataVerifier(configuration: configuration))
    }

    /// Runs `stage` once over its whole input topic as consumer group `group` (a new group reads
    /// the topic from its start), on `transport` unless `on` names the other one.
    func pass<S: Stage>(_ stage: S, group: String, on other: InMemoryTransport? = nil) async throws -> Pass {
        let transport = other ?? self.transport
        let runner = StageRunner(stage: stage, source: transport.source(group: group, topics: [topics.input(of: S.name)],
                                                                         finishWhenIdle: true),
                                 sink: transport.sink, configuration: runnerConfiguration, logger: .disabled, metrics: MetricsRegistry())
        let cpuBefore = processCPUSeconds()
        let faultsBefore = processMinorFaults()
        let elapsed = try await ContinuousClock().measure { try await runner.run() }
        let cpu = processCPUSeconds() - cpuBefore
        return Pass(seconds: elapsed / .seconds(1), cpuMicrosecondsPerRecord: cpu * 1e6 / Double(count),
                    faultsPerRecord: Double(processMinorFaults() - faultsBefore) / Double(count))
    }

    /// Deletes the records of every topic on `transport` but `kept` (``InMemoryTransport/deleteRecords(in:)``):
    /// what passes are done with goes, as a broker's retention would take it from a worker's
    /// view, so the next pass reuses the freed memory instead of paying for fresh pages (about 1 in
    /// 5 µs of fulfil's CPU when its outputs piled up round after round, docs/benchmarks.md).
    func deleteRecords(except kept: [String], on other: InMemoryTransport? = nil) {
        for topic in topics.allNames(retryTiers: 0) where !kept.contains(topic) {
            (other ?? transport).deleteRecords(in: topic)
        }
    }

    /// The line a pass prints: `label: N records in S s = R/s, C µs CPU per record, F page faults per record`.
    func line(_ label: String, _ pass: Pass) -> String {
        String(format: "%@: %d records in %.2f s = %.0f/s, %.2f µs CPU per record, %.2f page faults per record",
               label, count, pass.seconds, Double(count) / pass.seconds, pass.cpuMicrosecondsPerRecord, pass.faultsPerRecord)
    }
}
