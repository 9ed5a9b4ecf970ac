import Testing
@testable import Receiptd

/// `receiptd bench stages`: its record count under either option name, and `--only`, which
/// repeats one stage for profiling and side-by-side comparisons.
@Suite struct BenchCommandArgumentsTests {
    @Test func stagesTakeTheirCountUnderEitherName() throws {
        #expect(try BenchCommand(arguments: ["stages"]).count == 20_000)
        #expect(try BenchCommand(arguments: ["stages", "--count", "2000"]).count == 2_000)
        #expect(try BenchCommand(arguments: ["stages", "--submissions", "3000"]).count == 3_000)
        #expect(try BenchCommand(arguments: ["stages"]).only == nil)
    }

    @Test func onlyNamesOneStageAndDefaultsToFivePasses() throws {
        let command = try BenchCommand(arguments: ["stages", "--only", "fulfil"])
        #expect(command.only == .fulfil)
        #expect(command.rounds == 5)
        #expect(try BenchCommand(arguments: ["stages", "--only=resubmitted", "--rounds", "2"]).rounds == 2)
    }

    @Test(arguments: [["verify", "--only", "fulfil"], ["pipeline", "--only", "verify"], ["stages", "--only", "decode"],
                      ["stages", "--only"], ["stages", "--only", "owners", "--rounds", "0"]])
    func rejectsInvalidArguments(_ arguments: [String]) {
        #expect(throws: ValidationError.self) { try BenchCommand(arguments: arguments) }
    }

    /// The owners pass needs ingest, verify and fulfil before it; every pass must account for every record.
    @Test func onePassOfOneStageProcessesEveryRecord() async throws {
        let command = try BenchCommand(arguments: ["stages", "--only", "owners", "--rounds", "2", "--count", "100"])
        #expect(try await command.run() == 0)
    }
}
