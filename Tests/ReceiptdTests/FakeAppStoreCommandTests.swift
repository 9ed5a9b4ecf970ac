import AppStore
import Foundation
import HTTP
import Testing

/// `receiptd fake-appstore` as a process: the credentials it writes with `--pki-dir` are enough
/// for the production clients (key read from the `.p8`, shared secret from its file, signed data
/// verified against `root.pem`), and SIGTERM stops it with status 0.
@Suite(.serialized) struct FakeAppStoreCommandTests {
    /// Reads standard output until `count` lines have arrived (or the process ends).
    static func lines(_ handle: FileHandle, count: Int) -> [String] {
        var buffer = Data()
        while String(decoding: buffer, as: UTF8.self).split(separator: "\n").count < count {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test(.timeLimit(.minutes(1)))
    func writtenCredentialsDriveTheRealClients() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-appstore-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CheckCommandTests.binary)
        process.arguments = ["fake-appstore", "--port", "0", "--pki-dir", directory, "--samples", "2", "--bundle-id", "com.demo.cli"]
        // Stops by itself should this test process die (a crash would otherwise leave it running).
        process.environment = ProcessInfo.processInfo.environment.merging(["RECEIPTD_PARENT_PID": String(getpid())]) { _, new in new }
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = Pipe()
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let output = Self.lines(stdout.fileHandleForReading, count: 9)
        let baseURL = try #require(output.first)
        #expect(baseURL.hasPrefix("http://127.0.0.1:"))
        let samples = output.filter { $0.hasPrefix("sample: ") }
        #expect(samples.count == 2)
        func field(_ line: String, _ name: String) -> String? {
            line.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
        }
        let sandboxSample = try #require(samples.first { $0.contains("environment=Sandbox") })
        let keyId = try String(contentsOfFile: directory + "/key-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let issuerId = try String(contentsOfFile: directory + "/issuer-id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)

        let http = try CurlHTTPClient()
        defer { http.shutdown() }
        var api = AppStoreServerAPIConfiguration(signingKeyPath: directory + "/AuthKey_\(keyId).p8", keyId: keyId,
                                                 issuerId: issuerId, bundleId: "com.demo.cli")
        api.productionBaseURL = baseURL
        api.sandboxBaseURL = baseURL + "/sandbox"
        let client = try AppStoreServerAPIClient(configuration: api, transport: http)
        let info = try await client.getTransactionInfo(transactionId: try #require(field(sandboxSample, "transactionId")))
        let verifier = try SignedDataVerifier(configuration: SignedDataVerifierConfiguration(
            trustAnchors: try X509Certificate.load(path: directory + "/root.pem"), bundleIds: ["com.demo.cli"], environment: .any))
        #expect(try info.verifiedTransaction(using: verifier).get().environment == .sandbox)

        var legacy = VerifyReceiptConfiguration()
        legacy.productionURL = baseURL + "/verifyReceipt"
        legacy.sandboxURL = baseURL + "/sandbox/verifyReceipt"
        legacy.sharedSecretPath = directory + "/shared-secret"
        let receipts = try VerifyReceiptClient(configuration: legacy, transport: http)
        let result = try await receipts.verify(receiptData: try #require(field(sandboxSample, "receipt-data")))
        #expect(result.environment == .sandbox && result.bundleId == "com.demo.cli")

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func badRatesAreUsageErrors() throws {
        for arguments in [["--rate-5xx", "2"], ["--rate-drop", "0.6", "--rate-429", "0.6"], ["--seed", "-1"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CheckCommandTests.binary)
            process.arguments = ["fake-appstore"] + arguments
            let stderr = Pipe()
            process.standardOutput = Pipe()
            process.standardError = stderr
            try process.run()
            let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 64, "\(arguments)")
            #expect(message.contains("USAGE: receiptd fake-appstore"))
        }
    }
}
