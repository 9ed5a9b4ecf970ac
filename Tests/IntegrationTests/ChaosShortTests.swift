import Foundation
import Testing

/// The short form of `receiptd chaos` in the test suite: worker SIGKILLs, the broker down and
/// back, request errors, App Store faults, dead letters replayed, and then every submission
/// accounted for with none lost and no entitlement event emitted twice (exit status 0).
@Suite(.timeLimit(.minutes(5))) struct ChaosShortTests {
    @Test func shortChaosRunLosesNothingAndDuplicatesNothing() throws {
        let binary = CrashRestartTests.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build receiptd first: \(binary)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["chaos", "--submissions", "3000", "--kills", "4", "--seed", "11", "--timeout", "60"]
        process.currentDirectoryURL = BrokerFixture.repository
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let ledger = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(ledger)")
        #expect(ledger.contains("LOST (no verdict)                       0"))
        #expect(ledger.contains("DUPLICATED (event emitted twice)        0"))
        #expect(ledger.contains("worker SIGKILLs (restarted)             4"))
        #expect(ledger.contains("result: PASS"))
    }
}
