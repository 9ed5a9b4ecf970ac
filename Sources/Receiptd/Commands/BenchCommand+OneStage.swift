import AppStore
import Foundation
import Pipeline

/// The stages `bench stages --only` can measure on their own.
enum OneStage: String, CaseIterable {
    case runner, ingest, verify, resubmitted, fulfil, owners

    /// The stage whose input the passes read (the runner's pass-through stage reads ingest's).
    var stage: StageName {
        switch self {
        case .runner, .ingest: .ingest
        case .verify, .resubmitted: .verify
        case .fulfil: .fulfil
        case .owners: .owners
        }
    }
}

extension BenchCommand {
    /// `bench stages --only STAGE`: the stages before it once, then `rounds` passes of it alone,
    /// each over every record on a fresh consumer group. One process repeating one stage is what a
    /// profiler or a side-by-side comparison of two builds needs (scripts/bench-side-by-side);
    /// the full `bench stages` pass runs each stage once, after the others.
    func benchOneStage(_ only: OneStage) async throws -> Int32 {
        let bench = try StagesBench(count: count)
        let warmed = try bench.verifier()
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
        // Every pass must have done the whole job, or its figure measures something else: one output
        // per record on the stage's output topic (re-submitted verify: every lookup a cache hit too).
        let output: String? = switch only {
        case .runner: nil
        case .ingest: bench.topics.ingested
        case .verify, .resubmitted: bench.topics.verified
        case .fulfil: bench.topics.entitlementsChanged
        case .owners: bench.topics.entitlementState
        }
        // What the measured passes read; everything else is deleted before each pass (StagesBench.deleteRecords).
        let input = bench.topics.input(of: only.stage)
        func produced() -> Int { output.map { bench.transport.recordCount(in: $0) } ?? 0 }
        var cpu: [Double] = []
        for round in 1...rounds {
            let label = "\(only.rawValue) round \(round)"
            bench.deleteRecords(except: [input], on: only == .runner ? bench.plumbing : nil)
            let (producedBefore, hitsBefore) = (produced(), warmed.signedData.verifiedCacheStatistics.hits)
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
            let allHits = only != .resubmitted || warmed.signedData.verifiedCacheStatistics.hits - hitsBefore == count
            guard output == nil || produced() - producedBefore == count, allHits else {
                printError("bench stages --only \(only.rawValue): round \(round) did not process every record")
                return 1
            }
            printError(bench.line(label, pass))
            cpu.append(pass.cpuMicrosecondsPerRecord)
        }
        let sorted = cpu.sorted()
        let median = (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
        print(String(format: "stage_cpu_us_per_record=%.2f", median))
        return 0
    }
}
