import Foundation
import Testing

/// `receiptd demo` as a process: the embedded broker, the fake App Store, and ingest, verify and
/// fulfil as separate worker processes (each its own consumer group), fed with signed
/// transactions, server notifications (one in seven with a forged nested transaction),
/// transaction ids looked up through the App Store Server API, StoreKit 1 receipts through
/// verifyReceipt, duplicates, forgeries and malformed records. The demo checks every verdict
/// against what the generator knows to be right and exits non-zero on any difference.
@Suite(.timeLimit(.minutes(3))) struct DemoProcessTests {
    @Test func demoAccountsForEverySubmissionWithTheExpectedVerdict() throws {
        let binary = CrashRestartTests.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build receiptd first: \(binary)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["demo", "--submissions", "800", "--seed", "5", "--timeout", "90"]
        process.currentDirectoryURL = BrokerFixture.repository
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let summary = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(summary)")
        #expect(summary.contains("result: PASS"))
        #expect(summary.contains("serverNotification"))
        #expect(summary.contains("transactionId"))
        #expect(summary.contains("appReceipt"))
        #expect(summary.contains("transactions granted twice        0"))
    }
}
