import AppStore
import Foundation
import Pipeline

/// The stages `bench stages --only` can measure on their own.
enum OneStage: String, CaseIterable {
    case runner, ingest, verify, resubmitted, fulfil, owners
}

extension BenchCommand {
    /// `bench stages --only STAGE`: the stages before it once, then `rounds` passes of it alone,
    /// each over every record on a fresh consumer group. One process repeating one stage is what a
    /// profiler or a side-by-side comparison of two builds needs (scripts/bench-side-by-side);
    /// the full `bench stages` pass runs each stage once, after the others.
    func benchOneStage(_ only: OneStage) async throws -> Int32 {
        let bench = try StagesBench(count: count)
        let warmed = try bench.verifier()
        let ingested = bench.topics.ingested, verified = bench.topics.verified
        if only != .runner && only != .ingest {
            _ = try await bench.pass(IngestStage(), group: "ingest")
        }
        if only == .resubmitted || only == .fulfil || only == .owners {
            _ = try await bench.pass(VerifyStage(verifier: warmed), group: "verify")
        }
        if only == .owners {
            _ = try await bench.pass(FulfilStage(catalogue: bench.catalogue, ledger: KeyedStateStore(inMemoryCapacity: count + 1)),
                                     group: "fulfil")
        }
        var cpu: [Double] = []
        for round in 1...rounds {
            let label = "\(only.rawValue) round \(round)"
            let before = (bench.transport.records(in: ingested).count, bench.transport.records(in: verified).count,
                          bench.transport.records(in: bench.topics.entitlementState).count, warmed.signedData.verifiedCacheStatistics.hits)
            let pass: StagesBench.Pass
            switch only {
            case .runner: pass = try await bench.pass(ComputeOnlyPassThroughStage(), group: label, on: bench.plumbing)
            case .ingest: pass = try await bench.pass(IngestStage(), group: label)
            case .verify: pass = try await bench.pass(VerifyStage(verifier: try bench.verifier()), group: label)
            case .resubmitted: pass = try await bench.pass(VerifyStage(verifier: warmed), group: label)
            case .fulfil:
                pass = try await bench.pass(FulfilStage(catalogue: bench.catalogue, ledger: KeyedStateStore(inMemoryCapacity: count + 1)),
                                            group: label)
            case .owners: pass = try await bench.pass(OwnersStage(store: KeyedStateStore(inMemoryCapacity: count + 1)), group: label)
            }
            // Every pass must have done the whole job, or its figure measures something else.
            let complete: Bool = switch only {
            case .runner: true
            case .ingest: bench.transport.records(in: ingested).count - before.0 == count
            case .verify: bench.transport.records(in: verified).count - before.1 == count
            case .resubmitted: warmed.signedData.verifiedCacheStatistics.hits - before.3 == count
            case .fulfil: bench.transport.records(in: bench.topics.entitlementsChanged).count == count * round
            case .owners: bench.transport.records(in: bench.topics.entitlementState).count - before.2 == count
            }
            guard complete else {
                printError("bench stages --only \(only.rawValue): round \(round) did not process every record")
                return 1
            }
            printError(bench.line(label, pass))
            cpu.append(pass.cpuMicrosecondsPerRecord)
        }
        let sorted = cpu.sorted()
        let median = (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
        print(String(format: "stage_cpu_us_per_record=%.1f", median))
        return 0
    }
}
